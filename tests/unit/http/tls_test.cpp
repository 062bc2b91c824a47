// https against a self-signed certificate served on 127.0.0.1: verification is
// on by default and fails with a clear message; --insecure and --ca-cert both work. The
// certificate is made here with OpenSSL's C API, so nothing expires in the repository.
#include "llmbench/http/client.hpp"

#include <gtest/gtest.h>

#include "scripted_peer.hpp"
#include <cstdio>
#include <filesystem>
#include <memory>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <string>
#include <unistd.h>

namespace llmbench::http::test {
namespace {

/// A key pair and a self-signed X.509 v3 certificate for `alt_names` (subjectAltName syntax,
/// e.g. "IP:127.0.0.1,DNS:localhost"), valid for a day, CA:TRUE like `openssl req -x509` makes.
struct SelfSigned {
  std::string cert_pem;
  std::string key_pem;
};

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<std::size_t>(n));
}

SelfSigned make_self_signed(const char* alt_names) {
  using Key = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
  using Cert = std::unique_ptr<X509, decltype(&X509_free)>;
  using Bio = std::unique_ptr<BIO, decltype(&BIO_free)>;
  Key key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"), EVP_PKEY_free);
  LLMBENCH_ASSERT(key != nullptr, "EC key generation failed");
  Cert cert(X509_new(), X509_free);
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  const std::string cn = "llmbench test";
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, cert.get(), cert.get(), nullptr, nullptr, 0);
  for (const auto& [nid, value] : {std::pair{NID_subject_alt_name, alt_names},
                                   std::pair{NID_basic_constraints, "critical,CA:TRUE"}}) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
    LLMBENCH_ASSERT(ext != nullptr, "bad certificate extension");
    X509_add_ext(cert.get(), ext, -1);
    X509_EXTENSION_free(ext);
  }
  LLMBENCH_ASSERT(X509_sign(cert.get(), key.get(), EVP_sha256()) > 0, "signing failed");
  Bio cert_bio(BIO_new(BIO_s_mem()), BIO_free);
  Bio key_bio(BIO_new(BIO_s_mem()), BIO_free);
  PEM_write_bio_X509(cert_bio.get(), cert.get());
  PEM_write_bio_PrivateKey(key_bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  return SelfSigned{.cert_pem = bio_text(cert_bio.get()), .key_pem = bio_text(key_bio.get())};
}

/// The certificate written to a file (what a user passes to --ca-cert); removed at the end.
class PemFile {
 public:
  explicit PemFile(const std::string& text)
      : path_(std::filesystem::temp_directory_path() /
              ("llmbench_tls_test_" + std::to_string(::getpid()) + "_" +
               std::to_string(counter_++) + ".pem")) {
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    LLMBENCH_ASSERT(f != nullptr, "cannot write the test certificate");
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  PemFile(const PemFile&) = delete;
  PemFile& operator=(const PemFile&) = delete;
  PemFile(PemFile&&) = delete;
  PemFile& operator=(PemFile&&) = delete;
  ~PemFile() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  [[nodiscard]] std::string path() const { return path_.string(); }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

net::ssl::context server_context(const SelfSigned& pair) {
  net::ssl::context ctx(net::ssl::context::tls_server);
  ctx.use_certificate_chain(net::buffer(pair.cert_pem));
  ctx.use_private_key(net::buffer(pair.key_pem), net::ssl::context::pem);
  return ctx;
}

const std::string kAnswer =
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}";

/// One request over TLS to a peer serving `pair`, with `options`.
Outcome fetch_over_tls(const SelfSigned& pair, ClientOptions options, Collect& seen,
                       const std::string& host = "127.0.0.1") {
  net::io_context ioc;
  auto ctx = server_context(pair);
  ScriptedPeer peer(ioc, {{Reply{.bytes = kAnswer}}}, &ctx);
  Url url = peer.url(true);
  url.host = host;
  ConnectionPool pool(ioc, url, std::move(options));
  const auto out = run_exchange(ioc, pool, post("/v1/completions"), seen);
  EXPECT_TRUE(out.has_value()) << "the client hung";
  return out.value_or(Outcome{});
}

TEST(ClientTls, SelfSignedCertificateFailsVerificationByDefault) {
  const auto pair = make_self_signed("IP:127.0.0.1,DNS:localhost");
  Collect seen;
  const auto out = fetch_over_tls(pair, ClientOptions{}, seen);
  EXPECT_EQ(out.failure, Failure::Connect) << out.message;
  EXPECT_NE(out.message.find("certificate is not trusted"), std::string::npos) << out.message;
  EXPECT_NE(out.message.find("self-signed certificate"), std::string::npos) << out.message;
  EXPECT_NE(out.message.find("--ca-cert FILE"), std::string::npos) << out.message;
  EXPECT_NE(out.message.find("--insecure"), std::string::npos) << out.message;
  EXPECT_EQ(seen.sent, 0);  // nothing was sent to an unverified server
}

TEST(ClientTls, InsecureSkipsVerification) {
  const auto pair = make_self_signed("IP:127.0.0.1,DNS:localhost");
  ClientOptions options;
  options.insecure = true;
  Collect seen;
  const auto out = fetch_over_tls(pair, options, seen);
  EXPECT_EQ(out.failure, Failure::None) << out.message;
  EXPECT_EQ(out.status, 200);
  EXPECT_EQ(seen.body, R"({"a":1})");
}

TEST(ClientTls, CaCertFileMakesTheCertificateTrusted) {
  const auto pair = make_self_signed("IP:127.0.0.1,DNS:localhost");
  const PemFile ca(pair.cert_pem);
  for (const std::string host : {"127.0.0.1", "localhost"}) {
    SCOPED_TRACE(host);
    ClientOptions options;
    options.ca_cert_file = ca.path();
    Collect seen;
    const auto out = fetch_over_tls(pair, options, seen, host);
    EXPECT_EQ(out.failure, Failure::None) << out.message;
    EXPECT_EQ(seen.body, R"({"a":1})");
  }
}

TEST(ClientTls, TrustedCertificateForAnotherNameIsRejected) {
  const auto pair = make_self_signed("DNS:other.example");
  const PemFile ca(pair.cert_pem);
  ClientOptions options;
  options.ca_cert_file = ca.path();
  Collect seen;
  const auto out = fetch_over_tls(pair, options, seen);
  EXPECT_EQ(out.failure, Failure::Connect) << out.message;
  EXPECT_NE(out.message.find("IP address mismatch"), std::string::npos) << out.message;
}

TEST(ClientTls, UnreadableCaCertFileIsAnErrorNamingIt) {
  net::io_context ioc;
  ClientOptions options;
  options.ca_cert_file = "/nonexistent/ca.pem";
  const Url url{.tls = true, .host = "127.0.0.1", .port = 443, .path_prefix = ""};
  try {
    ConnectionPool pool(ioc, url, options);
    FAIL() << "expected an exception";
  } catch (const Exception& e) {
    EXPECT_NE(std::string(e.what()).find("--ca-cert '/nonexistent/ca.pem'"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace llmbench::http::test
