import type { YamlStream } from "@mesh/shared/config/mesh/yaml_documents";
import type { FileLoad } from "./config_file_load.ts";
import { LoopSlices } from "@mesh/shared/time/loop_slices";

/** Validates the documents of one parsed stream into a {@link FileLoad}, synchronously. */
export type LoadStream = (
  file: string,
  text: string,
  stream: YamlStream,
  defaultNamespace: string,
) => FileLoad;

/**
 * `load` applied one document at a time, the event loop running between slices of them: a file of thousands
 * of resources is validated without holding the loop. The result equals `load` of the whole stream.
 */
export async function loadStreamSliced(
  load: LoadStream,
  file: string,
  text: string,
  stream: YamlStream,
  defaultNamespace: string,
): Promise<FileLoad> {
  if (stream.errors.length > 0 || stream.documents.length < 2) {
    return load(file, text, stream, defaultNamespace);
  }
  const slices = new LoopSlices();
  const parts: FileLoad[] = [];
  for (const doc of stream.documents) {
    await slices.pause();
    parts.push(load(file, text, { documents: [doc], errors: [] }, defaultNamespace));
  }
  return {
    file,
    unreadable: false,
    empty: text.length === 0,
    documents: parts.flatMap((p) => p.documents),
    rejections: parts.flatMap((p) => p.rejections),
    warnings: parts.flatMap((p) => p.warnings),
  };
}
