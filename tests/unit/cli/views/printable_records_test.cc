// The CLI rewrites every string of a response before printing it: nested
// messages, repeated fields and maps included.

#include "cli/views/printable_records.h"

#include <google/protobuf/descriptor.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "gantry/v1/client.pb.h"
#include "tests/unit/support/every_field.h"

namespace gantry::cli {
namespace printable_records_test {

v1::GetJobResponse HostileJob() {
  v1::GetJobResponse response;
  v1::JobRecord& job = *response.mutable_job();
  job.set_id(7);
  job.set_user("mallory");
  job.mutable_spec()->set_name("\x1b]0;owned\x07");
  job.mutable_spec()->add_required_nodes("node01\n");
  (*job.mutable_spec()->mutable_environment())["K\x1b"] = "v\x1b";
  job.mutable_latest_checkpoint()->set_path("/ck/\x1b[2J");
  job.add_attempts()->set_end_detail("bad \xff byte");
  v1::EventRecord& event = *response.add_events();
  event.set_detail("line\nbreak");
  return response;
}

TEST_CASE("MakePrintable escapes every string for a terminal") {
  v1::GetJobResponse response = HostileJob();
  MakePrintable(response, OutputKind::kTerminal);
  const v1::JobRecord& job = response.job();
  CHECK(job.user() == "mallory");
  CHECK(job.spec().name() == "\\x1b]0;owned\\x07");
  CHECK(job.spec().required_nodes(0) == "node01\\n");
  CHECK(job.spec().environment().at("K\\x1b") == "v\\x1b");
  CHECK(job.latest_checkpoint().path() == "/ck/\\x1b[2J");
  CHECK(job.attempts(0).end_detail() == "bad \\xff byte");
  CHECK(response.events(0).detail() == "line\\nbreak");
  CHECK(job.id() == 7);
}

TEST_CASE("MakePrintable for JSON only repairs what JSON cannot carry") {
  v1::GetJobResponse response = HostileJob();
  MakePrintable(response, OutputKind::kJson);
  const v1::JobRecord& job = response.job();
  CHECK(job.spec().name() == "\x1b]0;owned\x07");
  CHECK(job.attempts(0).end_detail() == "bad \xef\xbf\xbd byte");
  // The JSON library escapes the control characters itself (and would
  // have thrown on the ill-formed byte).
  const std::string dumped =
      nlohmann::json{{"name", job.spec().name()},
                     {"detail", job.attempts(0).end_detail()}}
          .dump();
  CHECK(dumped.find('\x1b') == std::string::npos);
  CHECK(dumped.find("\\u001b]0;owned\\u0007") != std::string::npos);
}

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

// The strings of `message`, however deep, that still hold an escape.
int UnescapedStrings(const Message& message) {
  const google::protobuf::Reflection& r = *message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r.ListFields(message, &fields);
  int found = 0;
  for (const FieldDescriptor* f : fields) {
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_STRING &&
        f->type() != FieldDescriptor::TYPE_BYTES) {
      const int size = f->is_repeated() ? r.FieldSize(message, f) : 1;
      for (int i = 0; i < size; ++i) {
        const std::string text = f->is_repeated()
                                     ? r.GetRepeatedString(message, f, i)
                                     : r.GetString(message, f);
        if (text.find('\x1b') != std::string::npos) ++found;
      }
    } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (!f->is_repeated()) {
        found += UnescapedStrings(r.GetMessage(message, f));
        continue;
      }
      for (int i = 0; i < r.FieldSize(message, f); ++i) {
        found += UnescapedStrings(r.GetRepeatedMessage(message, f, i));
      }
    }
  }
  return found;
}

TEST_CASE(
    "MakePrintable reaches every string of every response, however deep") {
  v1::GetJobResponse job;
  v1::ListNodesResponse nodes;
  v1::ClusterStatusResponse status;
  for (Message* response :
       std::initializer_list<Message*>{&job, &nodes, &status}) {
    gantry::testing::FillEveryField(*response, 5);
    REQUIRE(UnescapedStrings(*response) > 0);
    MakePrintable(*response, OutputKind::kTerminal);
    CHECK(UnescapedStrings(*response) == 0);
  }
}

}  // namespace printable_records_test
}  // namespace gantry::cli
