// @platformatic/kafka 1.x against SLUICE_BOOTSTRAP.  usage: node platformatic_tests.mjs produce|fetch|admin|group
//   produce  acks ALL, LEADER and NO_RESPONSE, then gzip: offsets in the results follow on from each other;
//            admin.listOffsets latest = everything sent
//   fetch    Consumer.fetch (the low-level Fetch the consumer stream uses, no group): from offset 0 and from 3,
//            offsets, keys, values and headers exact; listOffsets earliest/latest
//   admin    createTopics (partitions, configs), listTopics, describeConfigs, alterConfigs, INVALID_CONFIG
//   group    consume in a group, message.commit(), listCommittedOffsets, a new consumer resumes (testGroup)
import {
  Admin, Consumer, Producer, ProduceAcks, ConfigResourceTypes, stringSerializers, stringDeserializers
} from '@platformatic/kafka'
import { CONNECT_TIMEOUT_MS, REQUEST_TIMEOUT_MS, bootstrap, check, checkEqual, runTests, step, uniqueTopic, within }
  from './lib.mjs'

const LIMIT = REQUEST_TIMEOUT_MS + 4000
const base = () => ({
  bootstrapBrokers: [bootstrap()], connectTimeout: CONNECT_TIMEOUT_MS, timeout: REQUEST_TIMEOUT_MS,
  retries: 1, retryDelay: 200
})

function admin (onExit) {
  const a = new Admin({ clientId: 'compat-platformatic-admin', ...base() })
  onExit(() => a.close())
  return a
}

async function createTopic (a, topic, partitions = 1, configs = []) {
  const created = await within(LIMIT, `createTopics ${topic}`, a.createTopics({ topics: [topic], partitions, replicas: 1, configs }))
  checkEqual(created.map(t => [t.name, t.partitions]), [[topic, partitions]], 'createTopics result [name, partitions]')
  step(`created topic ${topic}`)
  return created[0]
}

function producer (onExit) {
  const p = new Producer({ clientId: 'compat-platformatic', ...base(), serializers: stringSerializers, autocreateTopics: false })
  onExit(() => p.close())
  return p
}

async function latest (a, topic) {
  const res = await within(LIMIT, 'admin.listOffsets', a.listOffsets({
    topics: [{ name: topic, partitions: [{ partitionIndex: 0, timestamp: -1n }] }]
  }))
  return res[0].partitions[0].offset
}

const msgs = (topic, tag, n, repeat = 1) => Array.from({ length: n }, (_, i) =>
  ({ topic, partition: 0, key: `${tag}-k${i}`, value: `${tag}-value-${i} `.repeat(repeat), headers: { i: `${i}` } }))

async function testProduce (onExit) {
  const a = admin(onExit)
  const topic = uniqueTopic('plt-produce')
  await createTopic(a, topic)
  const p = producer(onExit)
  const send = (acks, messages, compression) => within(LIMIT, `send acks=${acks}`, p.send({ acks, compression, messages }))
  const offsets = (res) => (res.offsets ?? []).map(o => [o.topic, o.partition, o.offset])

  checkEqual(offsets(await send(ProduceAcks.ALL, msgs(topic, 'all', 5))), [[topic, 0, 0n]], 'acks=ALL offsets')
  checkEqual(offsets(await send(ProduceAcks.LEADER, msgs(topic, 'one', 3))), [[topic, 0, 5n]], 'acks=LEADER offsets')
  await send(ProduceAcks.NO_RESPONSE, msgs(topic, 'zero', 2))
  checkEqual(offsets(await send(ProduceAcks.ALL, msgs(topic, 'gzip', 4, 60), 'gzip')), [[topic, 0, 10n]],
    'gzip acks=ALL offsets (after the acks=0 send)')
  step('acks ALL, LEADER, NO_RESPONSE and gzip: offsets 0, 5, (none), 10')
  checkEqual(await latest(a, topic), 14n, 'listOffsets latest')
}

function decode (partition) {
  const out = []
  for (const batch of partition.records ?? []) {
    for (const r of batch.records) {
      out.push([batch.firstOffset + BigInt(r.offsetDelta), r.key?.toString(), r.value?.toString(),
        r.headers.map(([k, v]) => [k?.toString(), v?.toString()])])
    }
  }
  return out
}

async function testFetch (onExit) {
  const a = admin(onExit)
  const topic = uniqueTopic('plt-fetch')
  await createTopic(a, topic)
  const p = producer(onExit)
  const sent = msgs(topic, 'f', 6)
  await within(LIMIT, 'send', p.send({ acks: ProduceAcks.ALL, messages: sent }))
  const c = new Consumer({ clientId: 'compat-platformatic-consumer', groupId: uniqueTopic('compat-unused'), ...base(), deserializers: stringDeserializers })
  onExit(() => c.close(true))
  const md = await within(LIMIT, 'metadata', c.metadata({ topics: [topic] }))
  const t = md.topics.get(topic)
  check(t, `metadata lacks ${topic}`)
  const leader = t.partitions[0].leader
  check(md.brokers.has(leader), `leader ${leader} not among the brokers ${[...md.brokers.keys()]}`)
  const fetchFrom = async (offset) => {
    const res = await within(LIMIT, `fetch from ${offset}`, c.fetch({
      node: leader, maxWaitTime: 500, minBytes: 1, maxBytes: 1 << 20,
      topics: [{ topicId: t.id, partitions: [{ partition: 0, fetchOffset: BigInt(offset), partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, lastFetchedEpoch: -1 }] }]
    }))
    checkEqual(res.responses.length, 1, 'topics in the fetch response')
    const part = res.responses[0].partitions[0]
    checkEqual([part.partitionIndex, part.errorCode, part.highWatermark], [0, 0, 6n], `fetch from ${offset}: [partition, error, high watermark]`)
    return decode(part)
  }
  const expected = sent.map((m, i) => [BigInt(i), m.key, m.value, [['i', `${i}`]]])
  checkEqual(await fetchFrom(0), expected, 'fetch from 0: [offset, key, value, headers]')
  const from3 = (await fetchFrom(3)).filter(r => r[0] >= 3n) // a batch may start before the fetch offset
  checkEqual(from3, expected.slice(3), 'fetch from 3: [offset, key, value, headers]')
  step('fetch from 0 and from 3 exact')
  const earliest = await within(LIMIT, 'listOffsets earliest', c.listOffsets({ topics: [topic], timestamp: -2n }))
  const end = await within(LIMIT, 'listOffsets latest', c.listOffsets({ topics: [topic] }))
  checkEqual([earliest.get(topic), end.get(topic)], [[0n], [6n]], 'listOffsets [earliest, latest]')
}

async function testAdmin (onExit) {
  const a = admin(onExit)
  const topic = uniqueTopic('plt-admin')
  await createTopic(a, topic, 2, [{ name: 'retention.ms', value: '3600000' }])
  check((await within(LIMIT, 'listTopics', a.listTopics())).includes(topic), `listTopics lacks ${topic}`)
  const describe = async () => {
    const res = await within(LIMIT, 'describeConfigs', a.describeConfigs({
      resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: topic }]
    }))
    checkEqual(res.map(r => r.resourceName), [topic], 'describeConfigs resources')
    return Object.fromEntries(res[0].configs.map(c => [c.name, c.value]))
  }
  let configs = await describe()
  checkEqual([configs['retention.ms'], configs['cleanup.policy']], ['3600000', 'delete'], 'retention.ms, cleanup.policy')
  await within(LIMIT, 'alterConfigs', a.alterConfigs({
    resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: topic, configs: [{ name: 'retention.ms', value: '7200000' }] }]
  }))
  configs = await describe()
  checkEqual(configs['retention.ms'], '7200000', 'retention.ms after alterConfigs')
  step('createTopics, listTopics, describeConfigs, alterConfigs ok')
  let error = null
  try {
    await within(LIMIT, 'createTopics (invalid)', a.createTopics({
      topics: [uniqueTopic('plt-invalid')], partitions: 1, replicas: 1, configs: [{ name: 'retention.ms', value: 'not-a-number' }]
    }))
  } catch (e) {
    error = e
  }
  check(error !== null, 'createTopics with retention.ms=not-a-number succeeded')
  check(error.findBy?.('apiId', 'INVALID_CONFIG'), `createTopics retention.ms=not-a-number: not INVALID_CONFIG: ${error.message} ${JSON.stringify(error.errors?.map(e => e.message))}`)
  step('invalid config: INVALID_CONFIG')
}

// A consumer group: consume() in mode 'committed' (falling back to earliest in a fresh group) until all 6 records
// came, message.commit() on the 4th, listCommittedOffsets shows 4; close; a new consumer of the group reads exactly
// offsets 4 and 5 (a lost commit would replay from 0).
async function testGroup (onExit) {
  const a = admin(onExit)
  const topic = uniqueTopic('plt-group')
  const groupId = uniqueTopic('plt-group')
  await createTopic(a, topic)
  const p = producer(onExit)
  await within(LIMIT, 'send', p.send({ acks: ProduceAcks.ALL, messages: msgs(topic, 'g', 6) }))

  const consumeUntil = async (count, what, onMessage) => {
    const c = new Consumer({ clientId: `compat-platformatic-${what}`, groupId, ...base(), deserializers: stringDeserializers })
    onExit(() => c.close(true))
    // Kafka's group.min.session.timeout.ms is 6000; a rebalance waits rebalanceTimeout for each member.
    const stream = await within(LIMIT + 10000, `${what}: consume`, c.consume({
      topics: [topic], mode: 'committed', fallbackMode: 'earliest', autocommit: false, maxWaitTime: 200,
      sessionTimeout: 6000, rebalanceTimeout: 10000, heartbeatInterval: 1000
    }))
    const got = []
    await within(30000, `${what}: ${count} records`, (async () => {
      for await (const message of stream) {
        got.push([message.partition, message.offset, message.value])
        await onMessage?.(message)
        if (got.length >= count) break
      }
    })())
    return { c, stream, got }
  }

  const first = await consumeUntil(6, 'first', async (message) => {
    if (message.offset === 3n) await within(LIMIT, 'message.commit', message.commit())
  })
  checkEqual(first.got.map(([part, offset]) => [part, offset]), [0n, 1n, 2n, 3n, 4n, 5n].map(o => [0, o]), 'first consumer [partition, offset]')
  const committed = await within(LIMIT, 'listCommittedOffsets', first.c.listCommittedOffsets({ topics: [{ topic, partitions: [0] }] }))
  checkEqual(committed.get(topic), [4n], 'listCommittedOffsets after message.commit() of offset 3')
  await within(LIMIT, 'first consumer close', first.c.close(true))
  step('consumed 6, committed 4, left the group')

  const second = await consumeUntil(2, 'second')
  checkEqual(second.got, [[0, 4n, 'g-value-4 '], [0, 5n, 'g-value-5 ']], 'second consumer [partition, offset, value]')
  step('a new consumer of the group resumed at the committed offset')
}

runTests({ produce: testProduce, fetch: testFetch, admin: testAdmin, group: testGroup })
