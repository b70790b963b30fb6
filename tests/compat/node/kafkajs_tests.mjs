// kafkajs 2.2.4 against SLUICE_BOOTSTRAP.  usage: node kafkajs_tests.mjs produce|admin|group
//   produce  acks -1, 1 and 0, then gzip: the baseOffsets in the acks follow on from each other, the acks=0 send
//            answers [], and admin.fetchTopicOffsets reports low 0 and high = everything sent
//   admin    createTopics with configEntries (true, then false when it exists), listTopics, fetchTopicMetadata,
//            describeConfigs, alterConfigs, fetchTopicOffsetsByTimestamp, INVALID_CONFIG on a bad value
//   group    consumer.run in a group, commitOffsets, admin.fetchOffsets, a new consumer resumes (testGroup)
import kafkajs from 'kafkajs'
import { CONNECT_TIMEOUT_MS, REQUEST_TIMEOUT_MS, bootstrap, check, checkEqual, runTests, step, uniqueTopic, within }
  from './lib.mjs'

const { Kafka, logLevel, CompressionTypes, ConfigResourceTypes } = kafkajs
const LIMIT = REQUEST_TIMEOUT_MS + 4000

function client () {
  return new Kafka({
    clientId: 'compat-kafkajs',
    brokers: [bootstrap()],
    connectionTimeout: CONNECT_TIMEOUT_MS,
    requestTimeout: REQUEST_TIMEOUT_MS,
    retry: { retries: 1, initialRetryTime: 100, maxRetryTime: 500 },
    logLevel: logLevel.ERROR
  })
}

async function connectedAdmin (kafka, onExit) {
  const admin = kafka.admin()
  onExit(() => admin.disconnect())
  await within(LIMIT, 'admin.connect', admin.connect())
  return admin
}

async function createTopic (admin, topic, configEntries = [], numPartitions = 1) {
  const created = await within(LIMIT, `createTopics ${topic}`, admin.createTopics({
    topics: [{ topic, numPartitions, replicationFactor: 1, configEntries }], timeout: REQUEST_TIMEOUT_MS
  }))
  checkEqual(created, true, `createTopics(${topic}) result`)
  step(`created topic ${topic}`)
}

const messages = (prefix, n) => Array.from({ length: n }, (_, i) =>
  ({ key: `${prefix}-k${i}`, value: `${prefix}-value-${i}`.repeat(prefix === 'gzip' ? 60 : 1), headers: { i: `${i}` }, partition: 0 }))

async function testProduce (onExit) {
  const kafka = client()
  const admin = await connectedAdmin(kafka, onExit)
  const topic = uniqueTopic('kjs-produce')
  await createTopic(admin, topic)
  const producer = kafka.producer({ allowAutoTopicCreation: false, retry: { retries: 0 } })
  onExit(() => producer.disconnect())
  await within(LIMIT, 'producer.connect', producer.connect())
  const send = (acks, msgs, compression) => within(LIMIT, `send acks=${acks}`, producer.send({ topic, acks, compression, timeout: REQUEST_TIMEOUT_MS, messages: msgs }))
  const baseOffsets = (res) => res.map(r => [r.partition, r.errorCode, r.baseOffset])

  checkEqual(baseOffsets(await send(-1, messages('all', 5))), [[0, 0, '0']], 'acks=-1 result [partition, error, baseOffset]')
  checkEqual(baseOffsets(await send(1, messages('one', 3))), [[0, 0, '5']], 'acks=1 result [partition, error, baseOffset]')
  checkEqual(await send(0, messages('zero', 2)), [], 'acks=0 result (no response expected)')
  const gz = await send(-1, messages('gzip', 4), CompressionTypes.GZIP)
  checkEqual(baseOffsets(gz), [[0, 0, '10']], 'gzip acks=-1 result after the acks=0 send [partition, error, baseOffset]')
  step('acks -1, 1, 0 and gzip: base offsets 0, 5, (none), 10')
  const offsets = await within(LIMIT, 'fetchTopicOffsets', admin.fetchTopicOffsets(topic))
  checkEqual(offsets.map(o => [o.partition, o.low, o.high]), [[0, '0', '14']], 'fetchTopicOffsets [partition, low, high]')
}

async function testAdmin (onExit) {
  const kafka = client()
  const admin = await connectedAdmin(kafka, onExit)
  const topic = uniqueTopic('kjs-admin')
  await createTopic(admin, topic, [{ name: 'retention.ms', value: '3600000' }, { name: 'cleanup.policy', value: 'delete' }], 2)
  checkEqual(await within(LIMIT, 'createTopics (again)', admin.createTopics({ topics: [{ topic }] })), false,
    'createTopics of an existing topic (false = TOPIC_ALREADY_EXISTS)')
  check((await within(LIMIT, 'listTopics', admin.listTopics())).includes(topic), `listTopics lacks ${topic}`)
  const md = await within(LIMIT, 'fetchTopicMetadata', admin.fetchTopicMetadata({ topics: [topic] }))
  checkEqual(md.topics.map(t => [t.name, t.partitions.map(p => [p.partitionId, p.partitionErrorCode]).sort()]),
    [[topic, [[0, 0], [1, 0]]]], 'fetchTopicMetadata [name, [partition, error]]')

  const describe = async () => {
    const res = await within(LIMIT, 'describeConfigs', admin.describeConfigs({
      includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }]
    }))
    checkEqual(res.resources.map(r => [r.errorCode, r.resourceName]), [[0, topic]], 'describeConfigs [error, name]')
    return Object.fromEntries(res.resources[0].configEntries.map(e => [e.configName, e.configValue]))
  }
  let configs = await describe()
  checkEqual([configs['retention.ms'], configs['cleanup.policy']], ['3600000', 'delete'], 'retention.ms, cleanup.policy')
  await within(LIMIT, 'alterConfigs', admin.alterConfigs({
    validateOnly: false,
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configEntries: [{ name: 'retention.ms', value: '7200000' }] }]
  }))
  configs = await describe()
  checkEqual(configs['retention.ms'], '7200000', 'retention.ms after alterConfigs')
  step('describeConfigs / alterConfigs ok')

  const producer = kafka.producer({ allowAutoTopicCreation: false })
  onExit(() => producer.disconnect())
  await within(LIMIT, 'producer.connect', producer.connect())
  const base = Date.now() - 60000
  await within(LIMIT, 'send', producer.send({
    topic, acks: -1, messages: [0, 1, 2].map(i => ({ value: `t${i}`, partition: 1, timestamp: `${base + 1000 * i}` }))
  }))
  const byTime = await within(LIMIT, 'fetchTopicOffsetsByTimestamp',
    admin.fetchTopicOffsetsByTimestamp(topic, base + 1500))
  checkEqual(byTime.map(o => [o.partition, o.offset]).sort(), [[0, '0'], [1, '2']],
    'fetchTopicOffsetsByTimestamp(base+1.5 s) [partition, offset] (partition 0 empty: its end, 0)')

  const bad = uniqueTopic('kjs-invalid')
  let error = null
  try {
    await within(LIMIT, 'createTopics (invalid)', admin.createTopics({
      topics: [{ topic: bad, configEntries: [{ name: 'retention.ms', value: 'not-a-number' }] }]
    }))
  } catch (e) {
    error = e
  }
  check(error !== null, 'createTopics with retention.ms=not-a-number succeeded')
  const types = (error.errors ?? [error]).map(e => e.type)
  checkEqual(types, ['INVALID_CONFIG'], `createTopics retention.ms=not-a-number error types (${error.message})`)
  step('invalid config: INVALID_CONFIG')
}

// A consumer group on a 2-partition topic: consumer.run until all 6 records came, commitOffsets (3 and 3),
// admin.fetchOffsets shows them; after disconnect 2 more records, and a new consumer of the group (fromBeginning,
// so a lost commit would replay offsets 0-2) reads exactly those.
async function testGroup (onExit) {
  const kafka = client()
  const admin = await connectedAdmin(kafka, onExit)
  const topic = uniqueTopic('kjs-group')
  const groupId = uniqueTopic('kjs-group')
  await createTopic(admin, topic, [], 2)
  const producer = kafka.producer({ allowAutoTopicCreation: false })
  onExit(() => producer.disconnect())
  await within(LIMIT, 'producer.connect', producer.connect())
  const send = (tag, perPartition) => within(LIMIT, `send ${tag}`, producer.send({
    topic, acks: -1,
    messages: [0, 1].flatMap(partition => Array.from({ length: perPartition }, (_, i) => ({ partition, value: `${tag}-${partition}-${i}` })))
  }))
  await send('first', 3)

  const consumeUntil = async (count, what) => {
    // Kafka's group.min.session.timeout.ms is 6000; a rebalance waits rebalanceTimeout for each member.
    const consumer = kafka.consumer({ groupId, sessionTimeout: 6000, rebalanceTimeout: 10000, heartbeatInterval: 1000, maxWaitTimeInMs: 200 })
    onExit(() => consumer.disconnect())
    await within(LIMIT, `${what}: consumer.connect`, consumer.connect())
    await within(LIMIT, `${what}: subscribe`, consumer.subscribe({ topic, fromBeginning: true }))
    const got = []
    let done
    const all = new Promise(resolve => { done = resolve })
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        got.push([partition, message.offset, message.value.toString()])
        if (got.length >= count) done()
      }
    })
    await within(30000, `${what}: ${count} records through consumer.run`, all)
    await new Promise(resolve => setTimeout(resolve, 300)) // anything read twice would show now
    return { consumer, got: got.sort() }
  }

  const first = await consumeUntil(6, 'first consumer')
  checkEqual(first.got.map(([p, o]) => [p, o]), [[0, '0'], [0, '1'], [0, '2'], [1, '0'], [1, '1'], [1, '2']], 'first consumer [partition, offset]')
  await within(LIMIT, 'commitOffsets', first.consumer.commitOffsets([0, 1].map(partition => ({ topic, partition, offset: '3' }))))
  const fetched = await within(LIMIT, 'admin.fetchOffsets', admin.fetchOffsets({ groupId, topics: [topic] }))
  checkEqual(fetched.map(t => [t.topic, t.partitions.map(p => [p.partition, p.offset]).sort()]), [[topic, [[0, '3'], [1, '3']]]],
    'admin.fetchOffsets [topic, [partition, offset]]')
  await within(LIMIT, 'first consumer disconnect', first.consumer.disconnect())
  step('consumed 6, committed offset 3 on both partitions, left the group')

  await send('second', 1)
  const second = await consumeUntil(2, 'second consumer')
  checkEqual(second.got, [[0, '3', 'second-0-0'], [1, '3', 'second-1-0']], 'second consumer [partition, offset, value]')
  step('a new consumer of the group resumed at the committed offsets')
}

runTests({ produce: testProduce, admin: testAdmin, group: testGroup })
