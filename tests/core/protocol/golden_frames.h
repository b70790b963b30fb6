// Request and response bytes from real clients, for the codec's golden tests. Hex, grouped by field where it helps.
//
// kafka-python 2.0.2 (Debian's python3-kafka) encoded the non-flexible ones offline with its own protocol classes,
// client id "kafka-python" (script at the end of this file). The ApiVersions v3 request is what kcat on librdkafka
// 2.0.2 sent first to a listening socket (`kcat -b 127.0.0.1:PORT -L`). Flexible bodies that no installed client
// encodes are built by hand in the tests from Kafka 3.9's schemas.
#pragma once

namespace sluice::protocol::golden {

// --- Requests, whole frames (size prefix, header v1 or v2, body) ---

// ApiVersionRequest_v0(), correlation id 1.
inline constexpr const char* kApiVersionsV0Request = "00000016 0012 0000 00000001 000c6b61666b612d707974686f6e";
// ApiVersionRequest_v2(), correlation id 2.
inline constexpr const char* kApiVersionsV2Request = "00000016 0012 0002 00000002 000c6b61666b612d707974686f6e";
// librdkafka 2.0.2: ApiVersions v3, header v2 (client id "rdkafka", classic; empty tagged fields), then compact
// ClientSoftwareName "librdkafka" and ClientSoftwareVersion "2.0.2" and the body's empty tagged fields.
inline constexpr const char* kApiVersionsV3RequestLibrdkafka =
    "00000024 0012 0003 00000001 000772646b61666b61 00 | 0b6c696272646b61666b61 06322e302e32 00";
// MetadataRequest_v0(topics=['a', 'bb']), correlation id 3.
inline constexpr const char* kMetadataV0Request =
    "00000021 0003 0000 00000003 000c6b61666b612d707974686f6e | 00000002 000161 00026262";
// MetadataRequest_v1(topics=None): null means every topic from v1; correlation id 4.
inline constexpr const char* kMetadataV1NullRequest =
    "0000001a 0003 0001 00000004 000c6b61666b612d707974686f6e | ffffffff";
// MetadataRequest_v4(topics=['orders'], allow_auto_topic_creation=False), correlation id 5.
inline constexpr const char* kMetadataV4Request =
    "00000023 0003 0004 00000005 000c6b61666b612d707974686f6e | 00000001 00066f7264657273 | 00";
// MetadataRequest_v5(topics=[], allow_auto_topic_creation=True), correlation id 6.
inline constexpr const char* kMetadataV5EmptyRequest =
    "0000001b 0003 0005 00000006 000c6b61666b612d707974686f6e | 00000000 | 01";

// --- Response bodies (no size, no header) ---

// ApiVersionResponse_v1(error_code=0, api_versions=[(0,0,8),(18,0,3)], throttle_time_ms=7).
inline constexpr const char* kApiVersionsV1ResponseBody = "0000 | 00000002 000000000008 001200000003 | 00000007";
// MetadataResponse_v0(brokers=[(1,'h1',9092)], topics=[(0,'t',[(0,0,1,[1],[1])])]).
inline constexpr const char* kMetadataV0ResponseBody =
    "00000001 00000001 00026831 00002384 | 00000001 0000 000174 00000001 0000 00000000 00000001 00000001 00000001"
    " 00000001 00000001";
// MetadataResponse_v5(throttle_time_ms=0, brokers=[(1,'h1',9092,None),(2,'h2',9093,'r1')], cluster_id='c1',
//   controller_id=1, topics=[(0,'t',False,[(0,0,1,[1,2],[1],[2]),(6,1,-1,[2,1],[],[])]),(3,'u',True,[])]).
inline constexpr const char* kMetadataV5ResponseBody =
    "00000000 | 00000002 00000001 00026831 00002384 ffff 00000002 00026832 00002385 00027231 | 00026331 | 00000001"
    " | 00000002 0000 000174 00 00000002"
    " 0000 00000000 00000001 00000002 00000001 00000002 00000001 00000001 00000001 00000002"
    " 0006 00000001 ffffffff 00000002 00000002 00000001 00000000 00000000"
    " 0003 000175 01 00000000";

// The script (run with /usr/bin/python3; kafka-python's Struct.encode needs the object kept in a variable):
//   from kafka.protocol.parser import KafkaProtocol
//   from kafka.protocol.admin import ApiVersionRequest, ApiVersionResponse
//   from kafka.protocol.metadata import MetadataRequest, MetadataResponse
//   def frame(req, cid):
//       p = KafkaProtocol(client_id='kafka-python'); p.send_request(req, correlation_id=cid)
//       return p.send_bytes().hex()
//   print(frame(MetadataRequest[4](topics=['orders'], allow_auto_topic_creation=False), 5))
//   r = MetadataResponse[5](...); print(r.encode().hex())

}  // namespace sluice::protocol::golden
