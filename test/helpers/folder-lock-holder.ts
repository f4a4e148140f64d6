// Takes the folder lock of LOCK_KEY in LOCK_FOLDER as a gateway over those files does (src/stores/folder-lock.ts),
// prints "held", and keeps it until it is killed (test/integration/shared-folder.test.ts kills it with SIGKILL).
import { folderLock } from '../../src/stores/folder-lock'

void folderLock(process.env.LOCK_FOLDER!)(process.env.LOCK_KEY!, () => {
  process.stdout.write('held\n')
  return new Promise<never>(() => setInterval(() => undefined, 60_000))
})
