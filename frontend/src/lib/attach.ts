// Files the user attaches to a message by drag and drop, paste or the picker. The
// window reads the bytes of the files it was given (a drop, a paste) and hands them to
// the host; it never names a path for the host to read (the picker is a native dialog
// opened by the host). Pure helpers: tested without a browser.

/** The largest file the host attaches (backend.MaxAttachmentBytes): 20 MiB. */
export const MAX_ATTACHMENT_BYTES = 20 * 1024 * 1024;

/** 512 → "512 bytes", 5_223 → "5.1 KB", 2_400_000 → "2.3 MB" (1 KB = 1024 bytes, as the host writes it). */
export function humanBytes(n: number): string {
  if (!Number.isFinite(n) || n < 0) return '';
  if (n < 1024) return n === 1 ? '1 byte' : `${n} bytes`;
  const trim = (x: number) => x.toFixed(1).replace(/\.0$/, '');
  if (n < 1024 * 1024) return `${trim(n / 1024)} KB`;
  return `${trim(n / (1024 * 1024))} MB`;
}

/**
 * The files of a drop or a paste. A paste of a screenshot has an image file named
 * "image.png" (or none): it is given a name with the time, so two pastes differ.
 */
export function filesOf(dt: DataTransfer | null, now = new Date()): File[] {
  if (!dt) return [];
  const out: File[] = [];
  if (dt.files && dt.files.length > 0) {
    for (const f of Array.from(dt.files)) out.push(f);
  } else if (dt.items) {
    for (const it of Array.from(dt.items)) {
      if (it.kind !== 'file') continue;
      const f = it.getAsFile();
      if (f) out.push(f);
    }
  }
  return out.map((f) => (isGenericPasteName(f.name) ? renamed(f, pastedName(f.type, now)) : f));
}

/** Whether a data transfer carries files (a drag of files over the window). */
export function hasFiles(dt: DataTransfer | null): boolean {
  if (!dt) return false;
  if (dt.types && Array.from(dt.types).includes('Files')) return true;
  return (dt.files?.length ?? 0) > 0;
}

function isGenericPasteName(name: string): boolean {
  return name === '' || /^image\.(png|jpe?g|gif|webp|bmp)$/i.test(name);
}

const EXT: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/gif': 'gif', 'image/webp': 'webp' };

/** "Pasted image 2026-12-01 09.47.12.png". */
export function pastedName(mime: string, now = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  const stamp = `${now.getFullYear()}-${p(now.getMonth() + 1)}-${p(now.getDate())} ${p(now.getHours())}.${p(now.getMinutes())}.${p(now.getSeconds())}`;
  const kind = mime.startsWith('image/') ? 'image' : 'file';
  const ext = EXT[mime] ?? (mime.startsWith('text/') ? 'txt' : 'bin');
  return `Pasted ${kind} ${stamp}.${ext}`;
}

function renamed(f: File, name: string): File {
  try {
    return new File([f], name, { type: f.type, lastModified: f.lastModified });
  } catch {
    return f;
  }
}

/** Why a file cannot be attached before reading it ("" when it may be). */
export function precheck(f: File): string {
  if (f.size === 0) return `${f.name} is empty: there is nothing to attach`;
  if (f.size > MAX_ATTACHMENT_BYTES) {
    return `${f.name} is ${humanBytes(f.size)}; Talaria attaches files up to ${humanBytes(MAX_ATTACHMENT_BYTES)}. Attach a smaller file, or a part of it.`;
  }
  return '';
}

/** The file's bytes as standard base64 (what the host's AttachFile takes). */
export async function fileBase64(f: Blob): Promise<string> {
  const buf = new Uint8Array(await f.arrayBuffer());
  return bytesBase64(buf);
}

/** Standard base64 of bytes, in chunks (String.fromCharCode takes a bounded argument list). */
export function bytesBase64(buf: Uint8Array): string {
  let bin = '';
  const chunk = 0x8000;
  for (let i = 0; i < buf.length; i += chunk) {
    bin += String.fromCharCode(...buf.subarray(i, i + chunk));
  }
  return btoa(bin);
}

/** What a chip says under the name: "image · 12 KB", "text · 2.1 MB · only the first 64 KB are sent". */
export function chipDetail(a: { kind: string; size: number; sent_bytes: number }): string {
  const parts = [a.kind === 'image' ? 'image' : 'text', humanBytes(a.size)];
  if (a.kind === 'text' && a.sent_bytes < a.size) parts.push(`only the first ${humanBytes(a.sent_bytes)} are sent`);
  return parts.join(' · ');
}
