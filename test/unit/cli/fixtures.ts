// The recorded histories of test/fixtures/story/ (from `temporal workflow show -o json` on the local stack), read as
// `kubectl tidal` reads a history from the SDK.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { readRun, type RunStory } from '../../../cli/history.js';

const dir = path.join(import.meta.dirname, '..', '..', 'fixtures', 'story');

export function recordedRun(file: string): RunStory {
  return readRun(`run-of-${file}`, historyFromJSON(JSON.parse(readFileSync(path.join(dir, `${file}.json`), 'utf8'))));
}
