// Shared helpers for the Node compat tests. The broker is SLUICE_BOOTSTRAP (127.0.0.1:PORT, loopback only).
import { randomBytes } from 'node:crypto'
import { isDeepStrictEqual, inspect } from 'node:util'

// Short client timeouts: a broker that does not answer fails a test in seconds.
// COMPAT_TIMEOUT_SCALE (an integer, default 1) stretches them for slow builds.
const SCALE = Number(process.env.COMPAT_TIMEOUT_SCALE || 1)
export const CONNECT_TIMEOUT_MS = 3000 * SCALE
export const REQUEST_TIMEOUT_MS = 5000 * SCALE

export function bootstrap () {
  const value = process.env.SLUICE_BOOTSTRAP
  if (!value) fatal('SLUICE_BOOTSTRAP is not set (run through tests/compat/run.sh, or export it: 127.0.0.1:PORT)')
  const [host, port] = value.split(':')
  if (host !== '127.0.0.1' && host !== 'localhost') fatal(`SLUICE_BOOTSTRAP must be a loopback address, got ${value}`)
  return `127.0.0.1:${Number(port)}`
}

function fatal (message) {
  console.error(message)
  process.exit(2)
}

export function uniqueTopic (prefix) {
  return `${prefix}-${randomBytes(4).toString('hex')}`
}

export class TestFailure extends Error {}

export function check (condition, message) {
  if (!condition) throw new TestFailure(message)
}

const show = (v) => inspect(v, { depth: 6, breakLength: 160 })

export function checkEqual (actual, expected, what) {
  if (!isDeepStrictEqual(actual, expected)) {
    throw new TestFailure(`${what}:\n  expected ${show(expected)}\n  actual   ${show(actual)}`)
  }
}

export function step (message) {
  console.log(`-- ${message}`)
}

// Rejects with a clear message when `promise` does not settle within `ms` (a client stuck on a silent broker).
export function within (ms, what, promise) {
  let timer
  const timeout = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new TestFailure(`${what}: no result within ${ms / 1000} s`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

// Dispatches `node FILE TEST` to tests[TEST](); exits 0 on success, 1 on failure.
export async function runTests (tests) {
  const name = process.argv[2]
  if (!tests[name]) fatal(`usage: node ${process.argv[1]} TEST\ntests: ${Object.keys(tests).join(' ')}`)
  const started = Date.now()
  const cleanups = []
  try {
    await tests[name]((fn) => cleanups.push(fn))
    console.log(`passed: ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`)
    await closeAll(cleanups)
    process.exit(0)
  } catch (error) {
    if (error instanceof TestFailure) console.log(`FAILED: ${name}: ${error.message}`)
    else console.log(`FAILED: ${name}: unexpected error\n${show(error)}`)
    await closeAll(cleanups)
    process.exit(1)
  }
}

async function closeAll (cleanups) {
  for (const fn of cleanups.reverse()) {
    try {
      await within(3000, 'close', Promise.resolve().then(fn))
    } catch {}
  }
}
