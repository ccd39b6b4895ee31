/**
 * The worker behind {@link loadConfigOffThread}: loads the config file text it is sent (parse and validation)
 * and answers with the {@link FileLoad}, plain data.
 *
 * @module
 */
import { type FileLoad, loadConfigText } from "./config_file_load.ts";
import type { OffThreadRequest } from "./yaml_off_thread.ts";

const scope = self as unknown as {
  onmessage: ((event: MessageEvent<OffThreadRequest>) => void) | null;
  postMessage(message: FileLoad): void;
};

scope.onmessage = (event) => {
  const { file, text, defaultNamespace } = event.data;
  scope.postMessage(loadConfigText(file, text, defaultNamespace));
};
