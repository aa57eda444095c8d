// SHA-256 over a stream of bytes, as lowercase hex: the digest the dataset
// cache uses to verify copies, fingerprint trees and seal its records.
//
// Thread-compatible: one digest per thread.
#pragma once

#include <openssl/evp.h>

#include <memory>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/string_view.h"

namespace gantry::agent {

class Sha256Digest {
 public:
  Sha256Digest() : context_(EVP_MD_CTX_new(), &EVP_MD_CTX_free) {
    EVP_DigestInit_ex(context_.get(), EVP_sha256(), nullptr);
  }
  void Add(const void* data, size_t size) {
    EVP_DigestUpdate(context_.get(), data, size);
  }
  void Add(absl::string_view text) { Add(text.data(), text.size()); }
  // The digest of everything added; call once.
  std::string Hex() {
    unsigned char bytes[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    EVP_DigestFinal_ex(context_.get(), bytes, &length);
    return absl::BytesToHexString(absl::string_view(
        reinterpret_cast<const char*>(bytes), static_cast<size_t>(length)));
  }

 private:
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context_;
};

}  // namespace gantry::agent
