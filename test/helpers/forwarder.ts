// A TCP forwarder in front of an upstream whose listener can be shut and reopened on the same
// port: while shut, a connect is refused, so nothing of a request can leave the gateway.
import { createServer, connect, type Server, type Socket } from 'node:net'

export interface Forwarder { url: string; shut: () => Promise<void>; reopen: () => Promise<void>; close: () => Promise<void> }

export async function startForwarder (target: string): Promise<Forwarder> {
  const { hostname, port } = new URL(target)
  const sockets = new Set<Socket>()
  const make = (): Server => createServer((client) => {
    const up = connect(Number(port), hostname)
    sockets.add(client).add(up)
    client.pipe(up).pipe(client)
    const end = (): void => { client.destroy(); up.destroy(); sockets.delete(client); sockets.delete(up) }
    client.on('error', end).on('close', end)
    up.on('error', end).on('close', end)
  })
  let server: Server | undefined = make()
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
  const at = (server.address() as { port: number }).port
  const shut = async (): Promise<void> => {
    const s = server
    server = undefined
    for (const c of sockets) c.destroy()
    if (s !== undefined) await new Promise<void>((resolve) => s.close(() => resolve()))
  }
  return {
    url: `http://127.0.0.1:${at}`,
    shut,
    reopen: async () => {
      if (server !== undefined) return
      server = make()
      await new Promise<void>((resolve) => server!.listen(at, '127.0.0.1', resolve))
    },
    close: shut
  }
}
