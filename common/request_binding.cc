#include "common/request_binding.h"

#include <openssl/evp.h>

#include <array>
#include <cstdlib>
#include <memory>
#include <vector>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/munge_credential.h"

namespace gantry {
namespace {

std::string DeterministicBytes(const google::protobuf::MessageLite& request) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream raw(&bytes);
    google::protobuf::io::CodedOutputStream coded(&raw);
    coded.SetSerializationDeterministic(true);
    request.SerializeToCodedStream(&coded);
  }
  return bytes;
}

struct DigestContextDeleter {
  void operator()(EVP_MD_CTX* context) const { EVP_MD_CTX_free(context); }
};

}  // namespace

std::string RequestDigest(std::string_view method,
                          const google::protobuf::MessageLite& request) {
  const std::string bytes = DeterministicBytes(request);
  std::unique_ptr<EVP_MD_CTX, DigestContextDeleter> context(EVP_MD_CTX_new());
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  const char separator = '\0';
  // SHA-256 cannot fail on memory it is given; a failure here is a broken
  // libcrypto, and a credential must never be bound to a partial digest.
  if (!context ||
      EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1 ||
      EVP_DigestUpdate(context.get(), method.data(), method.size()) != 1 ||
      EVP_DigestUpdate(context.get(), &separator, 1) != 1 ||
      EVP_DigestUpdate(context.get(), bytes.data(), bytes.size()) != 1 ||
      EVP_DigestFinal_ex(context.get(), digest.data(), &length) != 1) {
    std::abort();
  }
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(digest.data()), length));
}

std::string MungePayloadForRequest(
    std::string_view method, const google::protobuf::MessageLite& request) {
  return absl::StrCat("gantry:", std::string(method), ":",
                      RequestDigest(method, request));
}

absl::StatusOr<std::string> EncodeRequestCredential(
    std::string_view socket, std::string_view method,
    const google::protobuf::MessageLite& request) {
  return EncodeMungeCredential(socket, MungePayloadForRequest(method, request));
}

std::string PayloadMismatch(std::string_view payload, std::string_view method,
                            const google::protobuf::MessageLite& request) {
  if (payload == MungePayloadForRequest(method, request)) return "";
  const std::vector<std::string> parts =
      absl::StrSplit(std::string(payload), ':');
  if (parts.size() != 3 || parts[0] != "gantry") {
    return absl::StrCat(
        "the MUNGE credential is not bound to a request (payload \"",
        std::string(payload.substr(0, 64)),
        "\"); a gantry client older than this controller makes such "
        "credentials");
  }
  if (parts[1] != method) {
    return absl::StrCat("the MUNGE credential was made for another request (",
                        parts[1], "), not for this ", std::string(method));
  }
  return absl::StrCat(
      "the MUNGE credential was made for a different ", std::string(method),
      " request: its digest does not match this request's body (a "
      "credential vouches only for the exact request it was made for)");
}

}  // namespace gantry
