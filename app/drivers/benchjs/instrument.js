// The window benchmark's instrument (app/bench.go injects it with WindowExecJS). It
// only watches the page: it reads the DOM, listens to the runtime's `frames` events and
// times paints; every answer goes back to Go as the runtime event "bench:result"
// {id, ok, value}. "Painted" means: a task queued from requestAnimationFrame ran, i.e.
// the rendering update (style, layout, paint) after the change is over.
(() => {
  if (window.__talariaBench) return;
  const reply = (id, ok, value) => window.runtime.EventsEmit('bench:result', { id, ok, value });
  const nextPaint = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

  // When the page began to handle the event being delivered: Go's events arrive as
  // `window.wails.EventsNotify(json)` scripts; the time is taken before any listener runs.
  let arrival = 0;
  const notify = window.wails.EventsNotify;
  window.wails.EventsNotify = (msg) => {
    arrival = performance.now();
    if (typeof msg !== 'string' || !msg.includes('"name":"bench:')) woke.events++;
    return notify(msg);
  };

  // The page's wake-ups since the instrument loaded: timer callbacks, animation frames,
  // runtime events (not this benchmark's own) and bound-call results. The quiet minute
  // reports the difference: a page that polls or animates while nothing changes shows here.
  const woke = { timers: 0, frames: 0, events: 0, results: 0 };
  for (const name of ['setTimeout', 'setInterval']) {
    const orig = window[name];
    window[name] = function (fn, ...rest) {
      const counted =
        typeof fn === 'function'
          ? function (...a) {
              woke.timers++;
              return fn.apply(this, a);
            }
          : fn;
      return orig.call(window, counted, ...rest);
    };
  }
  const raf = window.requestAnimationFrame;
  window.requestAnimationFrame = (fn) =>
    raf.call(window, (t) => {
      woke.frames++;
      fn(t);
    });
  const callback = window.wails.Callback;
  if (callback)
    window.wails.Callback = (msg) => {
      woke.results++;
      return callback(msg);
    };

  // Frames of one session: the arrival of every batch of frames (the `frames` event)
  // that brings it text, and its paint.
  let watch = null;
  window.runtime.EventsOn('frames', (frames) => {
    if (!watch || !Array.isArray(frames)) return;
    let got = false;
    for (const f of frames) {
      if (!f || f.session_id !== watch.session || f.event !== 'token') continue;
      watch.len += f.data && typeof f.data.text === 'string' ? f.data.text.length : 0;
      got = true;
    }
    if (!got) return;
    const len = watch.len;
    const at = arrival || performance.now();
    nextPaint().then(() => {
      const now = performance.now();
      watch && watch.updates.push([len, now - at]);
      if (watch && len >= watch.until && !watch.doneAt) watch.doneAt = Date.now();
    });
  });

  // Keystrokes into the composer: the epoch ms each one was painted.
  let keys = null;
  document.addEventListener(
    'keydown',
    (e) => {
      if (!keys) return;
      const stamp = e.timeStamp;
      nextPaint().then(() => keys && keys.push({ painted: Date.now(), lag: performance.now() - stamp }));
    },
    true,
  );

  const api = {
    /** The page's wake-ups so far: {timers, frames, events, results} (counts). */
    wakeups() {
      return { ...woke };
    },
    /** The page's start-up timeline: navigation timing and every mark (ms since timeOrigin). */
    timing() {
      const nav = performance.getEntriesByType('navigation')[0];
      const out = { origin: performance.timeOrigin, elements: document.getElementsByTagName('*').length };
      if (nav) for (const k of ['fetchStart', 'responseEnd', 'domInteractive', 'domContentLoadedEventEnd', 'loadEventEnd']) out[k] = Math.round(nav[k]);
      for (const e of performance.getEntriesByType('mark')) out[e.name] = Math.round(e.startTime);
      for (const e of performance.getEntriesByType('resource')) out['res:' + e.name.split('/').pop()] = [Math.round(e.startTime), Math.round(e.responseEnd)];
      return out;
    },
    /** Resolves with the epoch ms of performance mark `name` (waits up to ms). */
    async mark(name, ms) {
      const end = performance.now() + ms;
      for (;;) {
        const e = performance.getEntriesByName(name)[0];
        if (e) return Math.round(performance.timeOrigin + e.startTime);
        if (performance.now() > end) throw new Error('no mark ' + name);
        await sleep(10);
      }
    },
    /** Clicks a session in the sidebar and waits until `token` is painted in the chat. */
    async open(session, token, ms) {
      // The row may still be on its way (the sidebar re-reads the sessions first).
      let btn = null;
      for (const until = performance.now() + ms; !btn; await sleep(20)) {
        btn = document.querySelector(`[data-session="${session}"]`);
        if (!btn && performance.now() > until) throw new Error('no sidebar row for ' + session);
      }
      const t0 = performance.now();
      btn.click();
      const end = t0 + ms;
      for (;;) {
        await new Promise((r) => requestAnimationFrame(r));
        const sc = document.querySelector('.scroller');
        // Shown: in the chat, and the chat is not hidden while it finds its place.
        if (sc && sc.textContent.includes(token) && !sc.querySelector('.positioning')) break;
        if (performance.now() > end) {
          const text = sc ? sc.textContent.replace(/\s+/g, ' ') : '';
          throw new Error(`token not shown: ${token} (chat ${sc ? 'found' : 'missing'}${sc && sc.querySelector('.positioning') ? ', still positioning' : ''}; its text ends "${text.slice(-160)}")`);
        }
      }
      await nextPaint();
      return { ms: performance.now() - t0, elements: document.getElementsByTagName('*').length };
    },
    /** Waits until `token` is painted in the chat (after a turn's rows are re-read). */
    async shown(token, ms) {
      const end = performance.now() + ms;
      for (;;) {
        const sc = document.querySelector('.scroller');
        if (sc && sc.textContent.includes(token)) break;
        if (performance.now() > end) {
          const text = sc ? sc.textContent.replace(/\s+/g, ' ') : '';
          throw new Error(`token not shown: ${token} (chat ${sc ? 'found' : 'missing'}${sc && sc.querySelector('.positioning') ? ', still positioning' : ''}; its text ends "${text.slice(-160)}")`);
        }
        await sleep(20);
      }
      await nextPaint();
      return true;
    },
    /** Starts timing token frames of session; `until`: the length that ends the answer. */
    watch(session, until) {
      watch = { session, len: 0, until, updates: [], doneAt: 0 };
      return true;
    },
    /** The updates recorded since `from` (an index), and when the answer was complete. */
    updates(from) {
      return watch ? { updates: watch.updates.slice(from), n: watch.updates.length, len: watch.len, doneAt: watch.doneAt } : null;
    },
    unwatch() {
      watch = null;
      return true;
    },
    /** Focuses the composer and starts recording keystrokes. */
    keys() {
      const ta = document.querySelector('textarea');
      if (!ta) throw new Error('no composer');
      ta.focus();
      keys = [];
      return true;
    },
    /** The keystrokes recorded (waits up to ms for `expected` of them); stops recording and empties the composer. */
    async keysDone(expected, ms) {
      const end = performance.now() + ms;
      while (keys && keys.length < expected && performance.now() < end) await sleep(50);
      const out = keys || [];
      keys = null;
      const ta = document.querySelector('textarea');
      if (ta) {
        ta.value = '';
        ta.dispatchEvent(new Event('input', { bubbles: true }));
      }
      return out;
    },
    /**
     * A full garbage collection where JSC exposes one ($vm.gc(); WebKitGTK's release
     * build does not, even with JSC_useDollarVM set); false when it does not
     * (allocation pressure instead would grow the heap the memory figure reads).
     */
    gc() {
      const vm = window.$vm;
      if (vm && typeof vm.gc === 'function') {
        vm.gc();
        return true;
      }
      return false;
    },
    /** Element count of the page. */
    elements() {
      return document.getElementsByTagName('*').length;
    },
    /** What the window shows, in short (experiments): element counts by region, visible text. */
    summary() {
      const n = (sel) => { const e = document.querySelector(sel); return e ? e.getElementsByTagName('*').length : -1; };
      return { links: [...document.querySelectorAll('link')].map((l) => l.rel + ' ' + l.getAttribute('href') + (l.sheet ? ' (loaded)' : '')), nav: n('nav'), main: n('main'), header: n('header'), aside: n('aside'), text: document.body.innerText.replace(/\s+/g, ' ').slice(0, 600) };
    },
    /**
     * Scrolls the sidebar's list to its end, step by step, until it stops growing; returns
     * how many distinct sessions were shown and the frame times while scrolling.
     */
    async sidebarReach(ms) {
      const seen = new Set();
      const frames = [];
      const list = document.querySelector('[data-session]')?.closest('.list, nav, ul')?.parentElement;
      let box = document.querySelector('[data-session]');
      while (box && box !== document.body && !(box.scrollHeight > box.clientHeight + 4 && getComputedStyle(box).overflowY !== 'visible')) box = box.parentElement;
      if (!box || box === document.body) throw new Error('no scrolling sidebar list' + (list ? '' : ''));
      const end = performance.now() + ms;
      let still = 0;
      let last = -1;
      for (const el of box.querySelectorAll('[data-session]')) seen.add(el.dataset.session); // the first screen
      while (performance.now() < end && still < 20) {
        const t = performance.now();
        box.scrollTop += box.clientHeight;
        await new Promise((r) => requestAnimationFrame(r));
        await new Promise((r) => setTimeout(r, 0));
        frames.push(performance.now() - t);
        for (const el of box.querySelectorAll('[data-session]')) seen.add(el.dataset.session);
        if (seen.size === last && box.scrollTop + box.clientHeight >= box.scrollHeight - 2) still++;
        else still = 0;
        last = seen.size;
      }
      box.scrollTop = 0;
      return { sessions: seen.size, frames };
    },
  };

  window.__talariaBench = api;
  window.runtime.EventsOn('bench:call', async (req) => {
    try {
      const fn = api[req.fn];
      if (!fn) throw new Error('no bench function ' + req.fn);
      reply(req.id, true, await fn(...(req.args || [])));
    } catch (err) {
      reply(req.id, false, String((err && err.message) || err));
    }
  });
  window.runtime.EventsEmit('bench:ready', true);
})();
