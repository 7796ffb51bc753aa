// SIMULATOR_FAULTS and SIMULATOR_TASK_SECONDS (docs/design.md#simulator-faults): the rule syntax
// parsed into the faults the tests inject by hand, every malformed value refused with a message
// naming the bad part — by the parser, by `npm run simulator` (the bin in a child process) and by
// the embedded default's configuration — never a crash.
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config/index.js'
import { parseFaultRules, parseTaskSeconds, simulatorEnvOptions } from '../../src/simulator/index.js'
import { startBin } from '../helpers/child.js'

const control = { campaignControl: true }

function problems (text: string, ctx = control): string[] {
  const parsed = parseFaultRules(text, ctx)
  if (parsed.ok) throw new Error(`"${text}" was accepted`)
  return parsed.problems
}

describe('SIMULATOR_FAULTS rules', () => {
  it('parses every kind, target and count into the faults of the programmatic API', () => {
    const parsed = parseFaultRules(
      ' drop-after-apply@submit:1, delay=500ms@tasks/get,delay=2s@read_control:3,hold@intervene,status@rpc,status=429@health,' +
      'rpc-error@renew_control,rpc-error=-32003@claim_control,method-not-found@request_status,wrong-id@supervisor.health,' +
      'invalid-json@card,redirect@agent-card,redirect=/elsewhere@agent-json,oversized@card,oversized=512KiB@tasks/get,drop@health,' +
      'delay=1ms@SendMessage,status=500@campaign/intervene,method-not-found@cancel:999999', control)
    expect(parsed.ok).toBe(true)
    if (!parsed.ok) return
    expect(parsed.rules.map(({ target, fault, times }) => ({ target, fault, times }))).toEqual([
      { target: { operation: 'submit' }, fault: { kind: 'drop' }, times: 1 },
      { target: { rpcMethod: 'tasks/get' }, fault: { kind: 'delay', ms: 500 }, times: undefined },
      { target: { operation: 'read_control' }, fault: { kind: 'delay', ms: 2000 }, times: 3 },
      { target: { operation: 'intervene' }, fault: { kind: 'hold' }, times: undefined },
      { target: 'rpc', fault: { kind: 'status', status: 503 }, times: undefined },
      { target: 'health', fault: { kind: 'status', status: 429 }, times: undefined },
      { target: { operation: 'renew_control' }, fault: { kind: 'rpc-error', code: -32603, message: 'Internal error' }, times: undefined },
      { target: { operation: 'claim_control' }, fault: { kind: 'rpc-error', code: -32003, message: 'Simulated error' }, times: undefined },
      { target: { operation: 'request_status' }, fault: { kind: 'rpc-error', code: -32601, message: 'Method not found' }, times: undefined },
      { target: { argusOperation: 'supervisor.health' }, fault: { kind: 'wrong-id' }, times: undefined },
      { target: 'card', fault: { kind: 'invalid-json' }, times: undefined },
      { target: 'agent-card', fault: { kind: 'redirect', location: '/moved' }, times: undefined },
      { target: 'agent-json', fault: { kind: 'redirect', location: '/elsewhere' }, times: undefined },
      { target: 'card', fault: { kind: 'oversized', bytes: 17 * 1024 * 1024, mode: 'chunked' }, times: undefined },
      { target: { rpcMethod: 'tasks/get' }, fault: { kind: 'oversized', bytes: 512 * 1024, mode: 'chunked' }, times: undefined },
      { target: 'health', fault: { kind: 'drop' }, times: undefined },
      { target: { rpcMethod: 'SendMessage' }, fault: { kind: 'delay', ms: 1 }, times: undefined },
      { target: { rpcMethod: 'campaign/intervene' }, fault: { kind: 'status', status: 500 }, times: undefined },
      { target: { operation: 'cancel' }, fault: { kind: 'rpc-error', code: -32601, message: 'Method not found' }, times: 999999 }
    ])
    // each keeps its text as written, for GET /_sim/faults
    expect(parsed.rules[0]!.text).toBe('drop-after-apply@submit:1')
    expect(parseFaultRules('', control)).toEqual({ ok: true, rules: [] })
    expect(parseFaultRules('   ', control)).toEqual({ ok: true, rules: [] })
  })

  it('refuses each malformed rule with a message naming it, all of them at once', () => {
    expect(problems('drop-after-apply:submit:1')).toEqual(['"drop-after-apply:submit:1": expected <kind>[=<value>]@<target>[:<times>], e.g. drop-after-apply@submit:1'])
    expect(problems('drop-after-aply@submit')[0]).toMatch(/^"drop-after-aply@submit": unknown fault "drop-after-aply" \(one of drop-after-apply, drop, delay, hold,/)
    expect(problems('Delay=5ms@rpc')[0]).toMatch(/^"Delay=5ms@rpc": unknown fault "Delay"/)
    expect(problems('delay@rpc')).toEqual(['"delay@rpc": delay needs a duration such as 500ms or 2s'])
    expect(problems('delay=5@rpc')).toEqual(['"delay=5@rpc": delay needs a duration such as 500ms or 2s, not "5"'])
    expect(problems('delay=601s@rpc')).toEqual(['"delay=601s@rpc": delay must be from 1ms to 600s'])
    expect(problems('delay=0ms@rpc')).toEqual(['"delay=0ms@rpc": delay must be from 1ms to 600s'])
    expect(problems('status=700@rpc')).toEqual(['"status=700@rpc": status must be from 400 to 599, not "700"'])
    expect(problems('status=@rpc')).toEqual(['"status=@rpc": status must be from 400 to 599, not ""'])
    expect(problems('rpc-error=abc@rpc')).toEqual(['"rpc-error=abc@rpc": rpc-error needs a whole number code such as -32603, not "abc"'])
    expect(problems('redirect=http://evil.example@card')).toEqual(['"redirect=http://evil.example@card": redirect needs a path such as /moved, not "http://evil.example"'])
    expect(problems('redirect=moved@card')).toEqual(['"redirect=moved@card": redirect needs a path such as /moved, not "moved"'])
    expect(problems('oversized=65MiB@card')).toEqual(['"oversized=65MiB@card": oversized needs a size from 1 byte to 64MiB, such as 2MiB, not "65MiB"'])
    expect(problems('hold=1@submit')).toEqual(['"hold=1@submit": hold takes no value'])
    expect(problems('hold@card')).toEqual(['"hold@card": hold applies to JSON-RPC calls, not to card'])
    expect(problems('drop@submit')[0]).toMatch(/^"drop@submit": drop applies to the HTTP routes .*write drop-after-apply$/)
    expect(problems('drop-after-apply@health')).toEqual(['"drop-after-apply@health": drop-after-apply applies to JSON-RPC calls; for health write drop'])
    expect(problems('hold@sumbit')[0]).toMatch(/^"hold@sumbit": unknown target "sumbit": a campaign-control operation \(submit, claim_control,/)
    expect(problems('hold@submit:0')).toEqual(['"hold@submit:0": times must be a whole number from 1 to 999999, not "0"'])
    expect(problems('hold@submit:')).toEqual(['"hold@submit:": times must be a whole number from 1 to 999999, not ""'])
    expect(problems('hold@submit:1x')).toEqual(['"hold@submit:1x": times must be a whole number from 1 to 999999, not "1x"'])
    expect(problems('hold@submit,,status@rpc,')).toEqual(['rule 2 is empty', 'rule 4 is empty'])
    expect(problems('hold@submit', { campaignControl: false })).toEqual(['"hold@submit": submit is a campaign-control operation, and this simulator does not serve campaign control (SIMULATOR_PROFILE=campaign-control)'])
    // several bad rules: each named, the good ones not
    expect(problems('hold@submit,bogus@rpc,delay=1@rpc')).toHaveLength(2)
    // control characters are shown inert, long text cut
    expect(problems('\u001b[31mx')[0]).toBe('"?[31mx": expected <kind>[=<value>]@<target>[:<times>], e.g. drop-after-apply@submit:1')
    expect(problems(`${'x'.repeat(100)}@rpc`)[0]).toMatch(/^"x{64}…": unknown fault "x{64}…"/)
    expect(problems(Array.from({ length: 33 }, () => 'hold@submit').join(','))).toEqual(['at most 32 rules'])
    expect(problems('x'.repeat(4097))).toEqual(['at most 4096 characters'])
  })
})

describe('SIMULATOR_TASK_SECONDS', () => {
  it('takes seconds (decimals too), and 0 or off for never', () => {
    expect(parseTaskSeconds('5')).toEqual({ ok: true, ms: 5000 })
    expect(parseTaskSeconds('0.25')).toEqual({ ok: true, ms: 250 })
    expect(parseTaskSeconds('86400')).toEqual({ ok: true, ms: 86_400_000 })
    expect(parseTaskSeconds('0')).toEqual({ ok: true, ms: undefined })
    expect(parseTaskSeconds('off')).toEqual({ ok: true, ms: undefined })
    for (const bad of ['-1', '5s', 'soon', '86401', '1e3', '0.0001', 'OFF', '']) expect(parseTaskSeconds(bad).ok, bad).toBe(false)
  })

  it('defaults to 10 s when unset or empty; both variables are read together', () => {
    expect(simulatorEnvOptions({}, true)).toEqual({ ok: true, options: { faults: [], completeAfterMs: 10_000 } })
    expect(simulatorEnvOptions({ SIMULATOR_TASK_SECONDS: '', SIMULATOR_FAULTS: '' }, true)).toEqual({ ok: true, options: { faults: [], completeAfterMs: 10_000 } })
    expect(simulatorEnvOptions({ SIMULATOR_TASK_SECONDS: 'x', SIMULATOR_FAULTS: 'y' }, true)).toEqual({
      ok: false,
      problems: [
        'SIMULATOR_FAULTS: "y": expected <kind>[=<value>]@<target>[:<times>], e.g. drop-after-apply@submit:1',
        'SIMULATOR_TASK_SECONDS: must be a number of seconds from 0.001 to 86400 (e.g. 5 or 0.5), or 0 or off to leave submitted tasks working'
      ]
    })
  })
})

describe('refused at start', () => {
  const BASE = { HOST: '127.0.0.1', PORT: '0', METRICS_PORT: '0', GATEWAY_LEDGER_URL: 'sqlite::memory:' }

  it('the embedded default: a configuration problem among the others, naming the bad rule', () => {
    let error: unknown
    try {
      loadConfig({ ...BASE, PORT: 'abc', SIMULATOR_PROFILE: 'campaign-control', SIMULATOR_FAULTS: 'drop-after-apply@submit:1,delay=5@tasks/get', SIMULATOR_TASK_SECONDS: 'soon' })
    } catch (err) {
      error = err
    }
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as Error).message.split('\n')).toEqual([
      'invalid configuration:',
      '  - PORT: must be a whole number from 0 to 65535',
      '  - SIMULATOR_FAULTS: "delay=5@tasks/get": delay needs a duration such as 500ms or 2s, not "5"',
      '  - SIMULATOR_TASK_SECONDS: must be a number of seconds from 0.001 to 86400 (e.g. 5 or 0.5), or 0 or off to leave submitted tasks working'
    ])
    // an operation target needs the campaign-control profile
    expect(() => loadConfig({ ...BASE, SIMULATOR_FAULTS: 'hold@submit' })).toThrow(/SIMULATOR_FAULTS: "hold@submit": submit is a campaign-control operation/)
  })

  it('the embedded default takes good values; with OPENOPERATOR_URL they are ignored, and a warning says so', () => {
    const config = loadConfig({ ...BASE, SIMULATOR_PROFILE: 'campaign-control', SIMULATOR_FAULTS: 'drop-after-apply@submit:1', SIMULATOR_TASK_SECONDS: '0.5' })
    expect(config.simulatorOptions.completeAfterMs).toBe(500)
    expect(config.simulatorOptions.faults.map((f) => f.text)).toEqual(['drop-after-apply@submit:1'])
    const remote = loadConfig({ ...BASE, OPENOPERATOR_URL: 'http://127.0.0.1:9', SIMULATOR_FAULTS: 'not a rule' })
    expect(remote.simulatorOptions).toEqual({ faults: [], completeAfterMs: undefined })
    expect(remote.warnings).toContain('SIMULATOR_FAULTS is set but ignored: it is for the embedded simulator, which runs only when OPENOPERATOR_URL is unset outside production')
  })

  it('npm run simulator: the bin prints every problem and exits 1, no stack', { tags: ['slow'] }, async () => {
    const p = startBin(['simulator'], { SIMULATOR_PORT: '0', SIMULATOR_FAULTS: 'drop-after-apply@submit:1,status=700@rpc', SIMULATOR_TASK_SECONDS: '-1' })
    expect(await p.exited).toBe(1)
    expect(p.err().trim().split('\n')).toEqual([
      'invalid configuration:',
      '  - SIMULATOR_FAULTS: "drop-after-apply@submit:1": submit is a campaign-control operation, and this simulator does not serve campaign control (SIMULATOR_PROFILE=campaign-control)',
      '  - SIMULATOR_FAULTS: "status=700@rpc": status must be from 400 to 599, not "700"',
      '  - SIMULATOR_TASK_SECONDS: must be a number of seconds from 0.001 to 86400 (e.g. 5 or 0.5), or 0 or off to leave submitted tasks working'
    ])
    expect(p.out()).toBe('')
  })
})
