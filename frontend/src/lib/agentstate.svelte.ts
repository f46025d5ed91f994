// A chat's ACP agent state (modes, models, options, slash commands) for the chat
// header's pickers and the composer's command list: read from the host when a chat on
// an ACP agent opens, replaced by every agent_state frame of its turns and every state
// the agent gives between turns, changed by the pickers. Kept apart from AppStore; App owns one instance.

import { errorText } from './api';
import { normaliseState, type AcpApi, type AcpChoiceKind, type AgentState } from './acp';
import type { Frame } from './protocol';

export class AgentStateStore {
  /** By session id. */
  states = $state<Record<string, AgentState>>({});
  /** Why the last read or change failed, by session id. */
  errors = $state<Record<string, string>>({});
  /** A change is on its way to the host, by session id. */
  saving = $state<Record<string, boolean>>({});

  /** Bumped, by session id, whenever a newer state arrives (a frame, a change). */
  private versions: Record<string, number> = {};

  constructor(private readonly api: AcpApi) {}

  private bump(sessionId: string): void {
    this.versions[sessionId] = (this.versions[sessionId] ?? 0) + 1;
  }

  /**
   * Reads the state of a chat on an ACP agent (opening its agent session). A read that
   * answers after a newer state came (the first turn's agent_state frame, while a slow
   * agent started for the read) does not replace it.
   */
  async load(sessionId: string): Promise<void> {
    const version = this.versions[sessionId] ?? 0;
    try {
      const st = await this.api.state(sessionId);
      if (st && (this.versions[sessionId] ?? 0) === version) this.states[sessionId] = st;
      delete this.errors[sessionId];
    } catch (err) {
      this.errors[sessionId] = errorText(err);
    }
  }

  /** Applies a frame of any stream: agent_state replaces the chat's state. */
  onFrame(f: Frame): void {
    if (f.event !== 'agent_state') return;
    const st = normaliseState(f.data as unknown as AgentState);
    if (st) {
      this.bump(f.session_id);
      this.states[f.session_id] = st;
    }
  }

  /** Applies a state the agent gave a chat between turns (Api.onAgentState). */
  onState(sessionId: string, state: AgentState): void {
    const st = normaliseState(state);
    if (!st) return;
    this.bump(sessionId);
    this.states[sessionId] = st;
  }

  forget(sessionId: string): void {
    delete this.states[sessionId];
    delete this.errors[sessionId];
  }

  /** Sets a mode, model or option of the chat's agent session. */
  async choose(sessionId: string, which: AcpChoiceKind, optionId: string, value: string): Promise<boolean> {
    this.saving[sessionId] = true;
    try {
      const st = await this.api.choose(sessionId, which, optionId, value);
      if (st) {
        this.bump(sessionId);
        this.states[sessionId] = st;
      }
      delete this.errors[sessionId];
      return true;
    } catch (err) {
      this.errors[sessionId] = errorText(err);
      return false;
    } finally {
      delete this.saving[sessionId];
    }
  }
}
