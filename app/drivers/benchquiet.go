package drivers

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"talaria/backend/bus"
	"talaria/bench/procstat"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// Issue 24's rows of the window benchmark: the memory each process keeps per turn with
// no collection forced anywhere, and the CPU an idle app spends.

// loadAvg is /proc/loadavg's first three fields ("" off Linux): the machine's load
// beside a figure measured on a shared machine.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// benchQuiet measures the CPU the app spends over TALARIA_BENCH_IDLE_S seconds (default
// 60) with a chat open and nothing happening: the web process's, the host's (this
// process) and the sidecar's, in CPU seconds, with the load average before and after,
// and the page's wake-ups over the span ("wakeups": timers, frames, events, results).
// bench/webkit sets it beside the bare Wails app's over the same span (bench/bareapp,
// BAREAPP_IDLE_S).
func (s *scenario) benchQuiet(ctx context.Context, d *benchDriver) error {
	secs, err := benchEnvInt("TALARIA_BENCH_IDLE_S", 60, 5)
	if err != nil {
		return err
	}
	sid, err := s.seedChat(ctx, "Quiet", 2, "READY-QUIET")
	if err != nil {
		return err
	}
	s.svc.Bus.Publish(bus.Event{Name: bus.EventSessionsChanged})
	time.Sleep(time.Second)
	if err := d.call(nil, 30*time.Second, "open", sid, "READY-QUIET", 20_000); err != nil {
		return err
	}
	// Whatever opening the chat set going (a debounce, the title, a draft's save) ends first.
	time.Sleep(5 * time.Second)
	car := s.svc.About().Diagnostics(ctx).PID
	var woke0, woke1 map[string]float64
	if err := d.call(&woke0, 10*time.Second, "wakeups"); err != nil {
		return err
	}
	load0 := loadAvg()
	web0, host0 := d.web(), self()
	car0, _ := procstat.Read(car)
	// The same from the threads' schedstat (ns): a quiet minute is a few 10 ms ticks.
	webT0, _ := procstat.Threads(d.webPID)
	hostT0, _ := procstat.Threads(os.Getpid())
	carT0, _ := procstat.Threads(car)
	time.Sleep(time.Duration(secs) * time.Second)
	web1, host1 := d.web(), self()
	car1, _ := procstat.Read(car)
	webT1, _ := procstat.Threads(d.webPID)
	hostT1, _ := procstat.Threads(os.Getpid())
	carT1, _ := procstat.Threads(car)
	if err := d.call(&woke1, 10*time.Second, "wakeups"); err != nil {
		return err
	}
	woke := map[string]float64{}
	for k, v := range woke1 {
		woke[k] = v - woke0[k]
	}
	emitBench(map[string]any{"event": "quiet", "seconds": secs, "wakeups": woke,
		"web_cpu_s": (web1.CPU - web0.CPU).Seconds(), "host_cpu_s": (host1.CPU - host0.CPU).Seconds(),
		"sidecar_cpu_s": (car1.CPU - car0.CPU).Seconds(), "load_before": load0, "load_after": loadAvg(),
		"web_run_s": procstat.RunBetween(webT0, webT1).Seconds(), "host_run_s": procstat.RunBetween(hostT0, hostT1).Seconds(),
		"sidecar_run_s": procstat.RunBetween(carT0, carT1).Seconds()})
	return nil
}

// self samples this process (the host); a zero Sample when /proc cannot be read.
func self() procstat.Sample {
	s, _ := procstat.Read(os.Getpid())
	return s
}

// benchMemoryNoGC runs TALARIA_BENCH_NOGC_TURNS short streamed turns (default 500) in
// one chat with no collection forced in any process, and samples the resident memory of
// the web process, the host and the sidecar every 25 turns. It reports each one's slope
// (bytes per turn, least squares) over the first half of the turns and over the second:
// memory that levels off has a second slope well under its first.
func (s *scenario) benchMemoryNoGC(ctx context.Context, d *benchDriver, p *providertest.Server) error {
	n, err := benchEnvInt("TALARIA_BENCH_NOGC_TURNS", 500, 50)
	if err != nil {
		return err
	}
	sid, err := s.seedChat(ctx, "Many turns, no collection", 2, "READY-NOGC")
	if err != nil {
		return err
	}
	s.svc.Bus.Publish(bus.Event{Name: bus.EventSessionsChanged})
	time.Sleep(time.Second)
	if err := d.call(nil, 30*time.Second, "open", sid, "READY-NOGC", 20_000); err != nil {
		return err
	}
	car := s.svc.About().Diagnostics(ctx).PID
	const every = 25
	var xs []float64
	ys := map[string][]float64{}
	sample := func(i int) {
		c, _ := procstat.Read(car)
		xs = append(xs, float64(i))
		ys["web"] = append(ys["web"], float64(d.web().RSS))
		ys["host"] = append(ys["host"], float64(self().RSS))
		ys["sidecar"] = append(ys["sidecar"], float64(c.RSS))
	}
	load0 := loadAvg()
	sample(0)
	for i := 1; i <= n; i++ {
		token := fmt.Sprintf("NOGC-%d-DONE", i)
		p.Enqueue(providertest.TextTurn("Here is ", "a short ", "answer with some **markdown** and `code`: ", token))
		if _, err := s.waitFrame(sid, protocol.EvStreamEnd, func() error { _, err := s.bound.Turns.StartTurn(sid, "Turn "+strconv.Itoa(i)); return err }); err != nil {
			return err
		}
		if err := d.call(nil, 30*time.Second, "shown", token, 20_000); err != nil {
			return err
		}
		// The scripted provider runs in this process and records every request (the
		// whole chat each time): forgotten, so the host's figure is the app's, not the
		// provider's record growing with the square of the turns.
		p.Reset()
		if i%every == 0 {
			sample(i)
		}
	}
	half := len(xs) / 2
	ev := map[string]any{"event": "memory_nogc", "turns": n, "load_before": load0, "load_after": loadAvg()}
	for k, v := range ys {
		ev[k+"_first"] = slope(xs[:half+1], v[:half+1])
		ev[k+"_second"] = slope(xs[half:], v[half:])
		ev[k+"_before"], ev[k+"_after"] = v[0], v[len(v)-1]
	}
	emitBench(ev)
	return nil
}
