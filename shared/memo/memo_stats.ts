/** What a bounded memo holds, as `/debug/cachez` shows it. */
export interface MemoStats {
  /** Entries held now. */
  readonly entries: number;
  /** Estimated bytes held now: the characters of what it keeps plus a fixed cost per entry. */
  readonly bytes: number;
  /** The bound of `bytes`; past it the memo starts afresh. */
  readonly maxBytes: number;
}
