/// <reference types="node" />
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { HOST_EVENTS, isKnownEvent, SIDECAR_EVENTS } from './protocol';

// The Go side declares the names (sidecar/protocol/frames.go) and its own test parses
// protocol.ts; this is the same check from this side, when the Go file is present.
const goFile = fileURLToPath(new URL('../../../sidecar/protocol/frames.go', import.meta.url));

function goList(src: string, name: string): string[] {
  const consts = new Map<string, string>();
  for (const m of src.matchAll(/^\s*(Ev\w+)\s*=\s*"([^"]+)"/gm)) consts.set(m[1], m[2]);
  const block = new RegExp(`${name}\\s*=\\s*\\[\\]string\\{([^}]*)\\}`).exec(src);
  if (!block) throw new Error(`${name} not found in frames.go`);
  return block[1].split(',').map((s) => s.trim()).filter(Boolean).map((id) => consts.get(id) ?? `?${id}`);
}

describe('protocol', () => {
  it('has no duplicate names', () => {
    const all = [...SIDECAR_EVENTS, ...HOST_EVENTS];
    expect(new Set(all).size).toBe(all.length);
    expect(isKnownEvent('token')).toBe(true);
    expect(isKnownEvent('stream_end')).toBe(true);
    expect(isKnownEvent('nope')).toBe(false);
  });

  it.skipIf(!existsSync(goFile))('mirrors sidecar/protocol/frames.go exactly', () => {
    const src = readFileSync(goFile, 'utf8');
    expect([...SIDECAR_EVENTS]).toEqual(goList(src, 'SidecarEvents'));
    expect([...HOST_EVENTS]).toEqual(goList(src, 'HostEvents'));
  });
});
