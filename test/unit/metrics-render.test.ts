// The metrics render cache (docs/design.md#metrics): one render per interval, shared by the
// scrapes that arrive while it runs; a failed render is not kept.
import { describe, expect, it } from 'vitest'
import { cachedRender } from '../../src/server.js'

function deferred (): { promise: Promise<string>; resolve: (v: string) => void; reject: (e: Error) => void } {
  let resolve!: (v: string) => void
  let reject!: (e: Error) => void
  const promise = new Promise<string>((res, rej) => { resolve = res; reject = rej })
  return { promise, resolve, reject }
}

describe('cachedRender', () => {
  it('shares one render among concurrent scrapes and serves it for the interval, then renders again', async () => {
    let t = 1000
    const pending: Array<ReturnType<typeof deferred>> = []
    const render = cachedRender(async () => { const d = deferred(); pending.push(d); return await d.promise }, 1000, () => t)
    const a = render()
    const b = render()
    expect(pending).toHaveLength(1)
    pending[0]!.resolve('one')
    expect(await Promise.all([a, b])).toEqual(['one', 'one'])
    t += 999
    expect(await render()).toBe('one')
    t += 1
    const c = render()
    expect(pending).toHaveLength(2)
    pending[1]!.resolve('two')
    expect(await c).toBe('two')
  })

  it('does not keep a failed render', async () => {
    let calls = 0
    const render = cachedRender(async () => { calls++; if (calls === 1) throw new Error('ledger down'); return 'ok' }, 1000, () => 0)
    await expect(render()).rejects.toThrow('ledger down')
    expect(await render()).toBe('ok')
    expect(calls).toBe(2)
  })
})
