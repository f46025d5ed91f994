// The window's background work beside the open chat: the background tasks of each
// session (/background, the task panel, their approval and clarify cards) and the side
// question panel (/btw). One area of the window's state (issue 25); the main store
// (store.svelte.ts) hosts it as `store.background` and routes frames to it.

import type { Api } from './api';
import { ApiError, errorCode, errorMessage, errorText } from './api';
import type { ApprovalCards } from './approvals.svelte';
import { StreamFollower } from './follower';
import type {
  ApprovalChoice,
  ApprovalData,
  BackgroundTask,
  BackgroundTasksUpdate,
  ClarifyAnswer,
  ClarifyData,
  Frame,
  SideQuestion,
  TaskResult,
  VaultAnswer,
} from './protocol';
import { initialStreamState, type StreamState } from './reducer';
import { parseCommand, sortTasks } from './tasks';

/** How many frames of not-yet-known sessions are held while a side question is asked. */
const SIDE_BUFFER = 500;

/** The side panel: a /btw question and its streamed answer (never saved). */
export interface SidePanel {
  question: string;
  /** null while AskSideQuestion is on its way */
  q: SideQuestion | null;
  stream: StreamState | null;
  /** AskSideQuestion or CancelSideQuestion failed. */
  error: string | null;
  cancelling: boolean;
}

/** A task's result as the panel shows it (GetBackgroundTaskResult). */
export interface TaskResultView {
  loading: boolean;
  result: TaskResult | null;
  error: string | null;
}

/** What BackgroundWork needs of the main store. */
export interface BackgroundHost {
  readonly activeId: string | null;
  /** Makes a session when none is open (/background or /btw on a new chat). */
  newSession(): Promise<{ id: string } | null>;
  /** Whether the sidebar (or the archive) lists the session. */
  knowsSession(sessionId: string): boolean;
  flashInfo(text: string): void;
  setBanner(sessionId: string, label: string, err: unknown): void;
  clearBanner(sessionId: string): void;
  /** The chat's cards: which answers are on their way and a failed one, shared with the tasks' cards. */
  readonly cards: Pick<ApprovalCards, 'answering' | 'cardError'>;
}

export class BackgroundWork {
  /** Per parent session: its background tasks (the latest `background_tasks` wins). */
  tasks = $state<Record<string, BackgroundTask[]>>({});
  /** Whole results opened with "Show result", by task id. */
  taskResults = $state<Record<string, TaskResultView>>({});
  /** Ids of the tasks whose Stop or Dismiss is on its way. */
  taskBusy = $state<string[]>([]);
  /** A failed task action, shown on its row. */
  taskError = $state<{ id: string; message: string } | null>(null);
  /** Task cards answered here ("<hidden session>:a:<id>" / ":c:"), hidden until the next list. */
  taskCardsSettled = $state<string[]>([]);
  /** The task panel is open (it opens when a task starts). */
  tasksOpen = $state(true);
  /** "Background tasks at once" (Settings); null until read. */
  maxTasks = $state<number | null>(null);
  maxTasksError = $state<string | null>(null);
  /** The side question panel, or null when closed. */
  side = $state<SidePanel | null>(null);


  /** Per parent: bumped by each `background_tasks` event, so an older listing loses. */
  private taskSeq = new Map<string, number>();
  private sideFollower: StreamFollower | null = null;
  /** Frames of unknown sessions that arrived while AskSideQuestion was on its way. */
  private sideBuffer: Frame[] = [];
  private sideAsking = 0;
  /** Bumped by every ask and close: an answer to an older ask is not shown. */
  private sideSeq = 0;

  constructor(
    private readonly api: Api,
    private readonly host: BackgroundHost,
  ) {}

  /** The open session's background tasks: running, queued (by position), ended. */
  get activeTasks(): BackgroundTask[] {
    return this.host.activeId ? (this.tasks[this.host.activeId] ?? []) : [];
  }

  /** A task's approval card to show, unless it was answered here already. */
  taskApproval(t: BackgroundTask): ApprovalData | null {
    const a = t.pending.approval;
    return a && !this.taskCardsSettled.includes(`${t.session_id}:a:${a.approval_id}`) ? a : null;
  }

  /** A task's clarify or vault card to show, unless it was answered here already. */
  taskClarify(t: BackgroundTask): ClarifyData | null {
    const c = t.pending.clarify;
    return c && !this.taskCardsSettled.includes(`${t.session_id}:c:${c.clarify_id}`) ? c : null;
  }


  /** True when a session has a task card waiting (the sidebar marks it). */
  taskNeedsYou(sessionId: string): boolean {
    return (this.tasks[sessionId] ?? []).some((t) => this.taskApproval(t) || this.taskClarify(t));
  }

  /** Stops following the side answer (the window closes). */
  stop(): void {
    this.sideFollower?.stop();
    this.sideFollower = null;
  }

  /** `background_tasks`: the parent's whole list replaces what the window had. */
  onTasks(u: BackgroundTasksUpdate): void {
    this.taskSeq.set(u.parent_session_id, (this.taskSeq.get(u.parent_session_id) ?? 0) + 1);
    this.setTasks(u.parent_session_id, u.tasks);
  }

  /** Reads a session's tasks (on open); an event that came meanwhile wins. */
  async loadTasks(parentId: string): Promise<void> {
    const seq = this.taskSeq.get(parentId) ?? 0;
    try {
      const list = await this.api.listBackgroundTasks(parentId);
      if ((this.taskSeq.get(parentId) ?? 0) !== seq) return;
      this.setTasks(parentId, list);
    } catch (err) {
      console.warn('ListBackgroundTasks failed', errorMessage(err));
    }
  }

  private setTasks(parentId: string, list: BackgroundTask[]): void {
    const sorted = sortTasks(list);
    this.tasks = { ...this.tasks, [parentId]: sorted };
    // Forget answered cards the host no longer lists (they will not come back).
    const live = new Set<string>();
    for (const ts of Object.values(this.tasks)) {
      for (const t of ts) {
        if (t.pending.approval) live.add(`${t.session_id}:a:${t.pending.approval.approval_id}`);
        if (t.pending.clarify) live.add(`${t.session_id}:c:${t.pending.clarify.clarify_id}`);
      }
    }
    if (this.taskCardsSettled.some((k) => !live.has(k))) this.taskCardsSettled = this.taskCardsSettled.filter((k) => live.has(k));
  }

  isTaskSession(sessionId: string): boolean {
    for (const ts of Object.values(this.tasks)) if (ts.some((t) => t.session_id === sessionId)) return true;
    return false;
  }

  /** /background: runs prompt as a task of the open session (a new one when none is open). */
  async startBackgroundTask(prompt: string): Promise<boolean> {
    const body = prompt.trim();
    if (!body) {
      this.host.flashInfo('Type what the task should do first.');
      return false;
    }
    const sid = this.host.activeId ?? (await this.host.newSession())?.id;
    if (!sid) return false;
    this.host.clearBanner(sid);
    try {
      const t = await this.api.startBackgroundTask(sid, body);
      // The event usually came first; else show the task until it does.
      if (t && !(this.tasks[sid] ?? []).some((x) => x.id === t.id)) this.setTasks(sid, [...(this.tasks[sid] ?? []), t]);
      this.tasksOpen = true;
      return true;
    } catch (err) {
      this.host.setBanner(sid, 'Could not start the background task', err);
      return false;
    }
  }

  /** "Run in background" on the composer's text (a leading /background is dropped). */
  async runInBackground(text: string): Promise<boolean> {
    const c = parseCommand(text);
    return this.startBackgroundTask(c.kind === 'background' ? c.prompt : text.trim());
  }

  async stopTask(taskId: string): Promise<boolean> {
    return this.taskAction(taskId, 'Could not stop the task', () => this.api.stopBackgroundTask(taskId));
  }

  async dismissTask(taskId: string): Promise<boolean> {
    return this.taskAction(taskId, 'Could not dismiss the task', async () => {
      await this.api.dismissBackgroundTask(taskId);
      const next: Record<string, BackgroundTask[]> = {};
      for (const [p, ts] of Object.entries(this.tasks)) next[p] = ts.filter((t) => t.id !== taskId);
      this.tasks = next;
      if (taskId in this.taskResults) {
        const r = { ...this.taskResults };
        delete r[taskId];
        this.taskResults = r;
      }
    });
  }

  private async taskAction(taskId: string, label: string, fn: () => Promise<void>): Promise<boolean> {
    if (this.taskBusy.includes(taskId)) return false;
    this.taskBusy = [...this.taskBusy, taskId];
    if (this.taskError?.id === taskId) this.taskError = null;
    try {
      await fn();
      return true;
    } catch (err) {
      this.taskError = { id: taskId, message: `${label}: ${errorText(err)}` };
      return false;
    } finally {
      this.taskBusy = this.taskBusy.filter((x) => x !== taskId);
    }
  }

  /** "Show result": reads the whole result (or why it failed). */
  async showTaskResult(taskId: string): Promise<void> {
    this.taskResults = { ...this.taskResults, [taskId]: { loading: true, result: null, error: null } };
    let view: TaskResultView;
    try {
      view = { loading: false, result: await this.api.getBackgroundTaskResult(taskId), error: null };
    } catch (err) {
      view = { loading: false, result: null, error: errorText(err) };
    }
    if (taskId in this.taskResults) this.taskResults = { ...this.taskResults, [taskId]: view };
  }

  hideTaskResult(taskId: string): void {
    const r = { ...this.taskResults };
    delete r[taskId];
    this.taskResults = r;
  }

  async loadMaxTasks(): Promise<void> {
    try {
      this.maxTasks = await this.api.getMaxBackgroundTasks();
      this.maxTasksError = null;
    } catch (err) {
      this.maxTasksError = errorText(err);
    }
  }

  /** Settings: how many background tasks run at once (1 to 10). */
  async saveMaxTasks(n: number): Promise<void> {
    await this.api.setMaxBackgroundTasks(n);
    this.maxTasks = n;
    this.maxTasksError = null;
  }

  // Cards of a task, answered with its hidden session id (a click or the card's shortcut).

  async respondTaskApproval(task: BackgroundTask, approvalId: string, choice: ApprovalChoice): Promise<boolean> {
    return this.answerTask(task, approvalId, 'a', () => this.api.respondApproval(task.session_id, approvalId, choice));
  }

  async respondTaskClarify(task: BackgroundTask, clarifyId: string, answers: ClarifyAnswer[]): Promise<boolean> {
    return this.answerTask(task, clarifyId, 'c', () => this.api.respondClarify(task.session_id, clarifyId, answers));
  }

  /** The value goes to the api and nowhere else; only "Secret NAME provided" is shown. */
  async respondTaskVault(task: BackgroundTask, card: ClarifyData, answer: VaultAnswer, remember: boolean): Promise<boolean> {
    const name = card.name || 'secret';
    return this.answerTask(task, card.clarify_id, 'c', async () => {
      const r = await this.api.respondVault(task.session_id, card.clarify_id, answer, remember);
      if (!r.ok) throw new ApiError('the agent no longer waits for this secret', 'stale');
      this.host.flashInfo(r.kept === 'declined' ? `Secret ${name} declined` : `Secret ${name} provided to the background task`);
    });
  }

  private async answerTask(task: BackgroundTask, id: string, kind: 'a' | 'c', send: () => Promise<void>): Promise<boolean> {
    if (this.host.cards.answering.includes(id)) return false;
    const key = `${task.session_id}:${kind}:${id}`;
    this.host.cards.answering = [...this.host.cards.answering, id];
    if (this.host.cards.cardError?.id === id) this.host.cards.cardError = null;
    try {
      await send();
      this.taskCardsSettled = [...this.taskCardsSettled, key];
      return true;
    } catch (err) {
      const message = errorText(err);
      if (errorCode(err) === 'stale') {
        this.taskCardsSettled = [...this.taskCardsSettled, key];
        this.host.flashInfo('That request was already answered or has timed out.');
        await this.loadTasks(task.parent_session_id);
      } else {
        this.host.cards.cardError = { id, message };
      }
      return false;
    } finally {
      this.host.cards.answering = this.host.cards.answering.filter((x) => x !== id);
    }
  }

  // ---- side questions ---------------------------------------------------------------

  /** /btw: asks beside the open session; the answer streams into the side panel. */
  async askSideQuestion(question: string): Promise<boolean> {
    const body = question.trim();
    if (!body) return false;
    const sid = this.host.activeId ?? (await this.host.newSession())?.id;
    if (!sid) return false;
    // One side question at a time: a new one replaces (and stops) the one shown.
    await this.closeSide();
    const ask = ++this.sideSeq;
    const panel: SidePanel = { question: body, q: null, stream: null, error: null, cancelling: false };
    this.side = panel;
    this.sideAsking++;
    try {
      const q = await this.api.askSideQuestion(sid, body);
      // Closed or replaced meanwhile: nobody follows this answer.
      if (ask !== this.sideSeq || !this.side) {
        void this.api.cancelSideQuestion(q.id).catch(() => {});
        return true;
      }
      this.side = { ...panel, q };
      this.followSide(q);
      return true;
    } catch (err) {
      if (ask === this.sideSeq && this.side) this.side = { ...panel, error: errorText(err) };
      return false;
    } finally {
      if (--this.sideAsking === 0) this.sideBuffer = [];
    }
  }

  /** Cancel: stops the side answer (what streamed stays in the panel). */
  async cancelSide(): Promise<void> {
    const side = this.side;
    if (!side?.q || side.stream?.ended) return;
    this.side = { ...side, cancelling: true };
    try {
      await this.api.cancelSideQuestion(side.q.id);
    } catch (err) {
      if (this.side?.q?.id === side.q.id) this.side = { ...this.side, error: errorText(err) };
    } finally {
      if (this.side?.q?.id === side.q.id) this.side = { ...this.side, cancelling: false };
    }
  }

  /** Close: the panel goes (a running answer is stopped; side answers are not saved). */
  async closeSide(): Promise<void> {
    const side = this.side;
    this.sideSeq++;
    this.sideFollower?.stop();
    this.sideFollower = null;
    this.side = null;
    if (side?.q && !side.stream?.ended) {
      try {
        await this.api.cancelSideQuestion(side.q.id);
      } catch (err) {
        console.warn('CancelSideQuestion failed', errorMessage(err));
      }
    }
  }

  private followSide(q: SideQuestion): void {
    this.sideFollower?.stop();
    const follower = new StreamFollower({
      sessionId: q.session_id,
      streamId: q.stream_id,
      streamSince: (id, seq) => this.api.streamSince(id, seq),
      onState: (s) => {
        if (this.sideFollower !== follower || this.side?.q?.id !== q.id) return;
        this.side = { ...this.side, stream: s };
        if (s.ended) {
          follower.stop();
          this.sideFollower = null;
        }
      },
      onError: () => {},
    });
    this.sideFollower = follower;
    this.side = this.side ? { ...this.side, stream: initialStreamState(q.stream_id, q.session_id) } : this.side;
    // Frames that came before AskSideQuestion answered.
    const early = this.sideBuffer.filter((f) => f.session_id === q.session_id && f.stream_id === q.stream_id);
    for (const f of early.sort((a, b) => a.seq - b.seq)) follower.push(f);
  }

  /** True when the frame belongs to a side question (it never reaches the chat). */
  routeSideFrame(f: Frame): boolean {
    const q = this.side?.q;
    if (q && f.session_id === q.session_id) {
      if (this.sideFollower && f.stream_id === q.stream_id) this.sideFollower.push(f);
      return true;
    }
    // While a question is asked, hold frames of sessions the window does not know: the
    // answer's first frames may come before its session id does.
    if (this.sideAsking > 0 && !this.host.knowsSession(f.session_id) && !this.isTaskSession(f.session_id)) {
      this.sideBuffer.push(f);
      if (this.sideBuffer.length > SIDE_BUFFER) this.sideBuffer.shift();
    }
    return false;
  }
}
