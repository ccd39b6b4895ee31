/**
 * What a file looked like when it was read, to skip reading it again while it is unchanged. Deno reports
 * file times in milliseconds and some file systems stamp at a coarser tick, so a file rewritten with the same
 * size within a tick of being read looks unchanged: a stamp taken within {@link RACY_STAMP_MS} of the file's
 * last change is not trusted, and the file is read again next time (as git treats "racily clean" entries).
 *
 * @module
 */

/** How long after a file's last change a stamp of it is still too close to trust. */
export const RACY_STAMP_MS = 2000;

/** A file's identity, size and times, and whether they can be trusted to reveal a later change. */
export interface FileStamp {
  readonly stamp: string;
  readonly trusted: boolean;
}

/** The stamp of `info` taken at `nowMs` (real time: it is compared with the file system's clock). */
export function fileStamp(info: Deno.FileInfo, nowMs: number): FileStamp {
  const changedAt = Math.max(info.mtime?.getTime() ?? Infinity, info.ctime?.getTime() ?? Infinity);
  return {
    stamp: `${info.dev}:${info.ino}:${info.size}:${info.mtime?.getTime()}:${info.ctime?.getTime()}`,
    trusted: nowMs - changedAt > RACY_STAMP_MS,
  };
}

/** True when `info` shows the file as it was when `known` was taken, and `known` can be trusted to say so. */
export function unchangedSince(known: FileStamp | undefined, info: Deno.FileInfo): boolean {
  return known !== undefined && known.trusted && known.stamp === fileStamp(info, 0).stamp;
}
