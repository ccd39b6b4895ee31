/** What a kind's validator knows about the resource besides its spec. */
export interface ValidationContext {
  /** Namespace of the resource (the caller's default when the document has none). */
  readonly namespace: string;
  /** `metadata.name` of the resource. */
  readonly name: string;
}
