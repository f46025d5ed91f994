// @vitest-environment jsdom
import { describe, expect, it } from 'vitest';
import { bytesBase64, chipDetail, fileBase64, filesOf, hasFiles, humanBytes, MAX_ATTACHMENT_BYTES, pastedName, precheck } from './attach';

function transfer(files: File[], items = false): DataTransfer {
  // jsdom has no DataTransfer: a shape with what filesOf reads.
  const list = Object.assign([...files], { item: (i: number) => files[i] });
  return (items
    ? { files: [] as unknown as FileList, items: files.map((f) => ({ kind: 'file', getAsFile: () => f })), types: ['Files'] }
    : { files: list as unknown as FileList, items: [], types: ['Files'] }) as unknown as DataTransfer;
}

describe('attachments', () => {
  it('write sizes as the host does', () => {
    expect(humanBytes(1)).toBe('1 byte');
    expect(humanBytes(41)).toBe('41 bytes');
    expect(humanBytes(5223)).toBe('5.1 KB');
    expect(humanBytes(65536)).toBe('64 KB');
    expect(humanBytes(2_400_000)).toBe('2.3 MB');
  });

  it('take the files of a drop and of a paste, naming pasted screenshots', () => {
    const when = new Date(2026, 11, 1, 9, 47, 12);
    const a = new File(['hello'], 'notes.txt', { type: 'text/plain' });
    const shot = new File([new Uint8Array([0x89, 0x50])], 'image.png', { type: 'image/png' });
    expect(filesOf(transfer([a])).map((f) => f.name)).toEqual(['notes.txt']);
    const pasted = filesOf(transfer([shot], true), when);
    expect(pasted.map((f) => f.name)).toEqual(['Pasted image 2026-12-01 09.47.12.png']);
    expect(pasted[0].type).toBe('image/png');
    expect(filesOf(null)).toEqual([]);
    expect(hasFiles(transfer([a]))).toBe(true);
    expect(pastedName('text/plain', when)).toBe('Pasted file 2026-12-01 09.47.12.txt');
  });

  it('refuse empty and oversized files before reading them', () => {
    expect(precheck(new File([], 'e.txt'))).toContain('empty');
    const big = { name: 'big.bin', size: MAX_ATTACHMENT_BYTES + 1 } as File;
    expect(precheck(big)).toContain('up to 20 MB');
    expect(precheck(new File(['x'], 'ok.txt'))).toBe('');
  });

  it('read bytes as standard base64, whatever their values', async () => {
    const all = new Uint8Array(256 * 300);
    for (let i = 0; i < all.length; i++) all[i] = i % 256;
    const b64 = await fileBase64(new Blob([all]));
    const back = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    expect(back).toEqual(all);
    expect(bytesBase64(new Uint8Array([0xff, 0x00, 0x10]))).toBe('/wAQ');
  });

  it('say on the chip when only the start of a text file is sent', () => {
    expect(chipDetail({ kind: 'text', size: 5000, sent_bytes: 1024 })).toBe('text · 4.9 KB · only the first 1 KB are sent');
    expect(chipDetail({ kind: 'image', size: 2048, sent_bytes: 2048 })).toBe('image · 2 KB');
  });
});
