// What tells a re-read file changed (docs/design.md#signed-cards, docs/design.md#authentication):
// its modification time, size and inode — the inode for a file replaced by a rename, as a
// Kubernetes Secret's symlink swap does. A file that cannot be read stamps as 'missing'.
import { statSync } from 'node:fs'

export function fileStamp (path: string): string {
  try {
    const s = statSync(path)
    return `${s.mtimeMs}:${s.size}:${s.ino}`
  } catch {
    return 'missing'
  }
}
