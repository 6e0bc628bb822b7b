// A small blocking HTTP/1.1 client over a raw socket, for the API tests. One connection per
// object; requests are written by hand, so tests can also send malformed bytes. Replies are
// parsed with Content-Length, chunked, or read-to-close bodies. Every read and write times
// out (SO_RCVTIMEO/SO_SNDTIMEO), so a server bug fails a test instead of hanging it.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace cohort::testing {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct HttpReply {
  int status = 0;                   // 0: no complete reply arrived
  HeaderList headers;               // names lower-cased
  std::string body;                 // de-chunked
  std::vector<std::string> chunks;  // the chunks, when the body was chunked

  // The first header called `name` (lower-case), or "" when absent.
  std::string header(std::string_view name) const {
    for (const auto& [k, v] : headers) {
      if (k == name) return v;
    }
    return {};
  }
  bool has_header(std::string_view name) const {
    for (const auto& kv : headers) {
      if (kv.first == name) return true;
    }
    return false;
  }
};

class HttpClient {
 public:
  explicit HttpClient(uint16_t port, int timeout_ms = 5000) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) return;
    timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) close();
  }
  ~HttpClient() { close(); }
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  bool connected() const { return fd_ >= 0; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  // Writes all of `bytes`; false when the connection failed or the peer closed.
  bool send_raw(std::string_view bytes) {
    while (!bytes.empty() && fd_ >= 0) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return fd_ >= 0;
  }

  // Writes a request. Adds Host, and Content-Length (plus a JSON Content-Type unless one
  // is given) when there is a body or the method is POST.
  bool send_request(const std::string& method, const std::string& target,
                    const std::string& body = {}, const HeaderList& headers = {}) {
    std::string req = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    bool has_type = false;
    for (const auto& [k, v] : headers) {
      req += k + ": " + v + "\r\n";
      if (lower(k) == "content-type") has_type = true;
    }
    if (!body.empty() || method == "POST") {
      if (!has_type) req += "Content-Type: application/json\r\n";
      req += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    }
    req += "\r\n";
    req += body;
    return send_raw(req);
  }

  // Reads one reply. `head`: it answers a HEAD request, so no body follows.
  HttpReply read_reply(bool head = false) {
    HttpReply reply;
    size_t end = 0;
    while ((end = buf_.find("\r\n\r\n")) == std::string::npos) {
      if (!fill()) return reply;
    }
    const std::string head_block = buf_.substr(0, end);
    buf_.erase(0, end + 4);
    size_t line_end = head_block.find("\r\n");
    const std::string status_line = head_block.substr(0, line_end);
    if (status_line.size() < 12 || status_line.compare(0, 5, "HTTP/") != 0) return reply;
    const int status = std::atoi(status_line.c_str() + 9);
    while (line_end != std::string::npos) {
      const size_t start = line_end + 2;
      line_end = head_block.find("\r\n", start);
      const std::string line = head_block.substr(start, line_end - start);
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.erase(0, 1);
      reply.headers.emplace_back(lower(line.substr(0, colon)), value);
    }
    const bool no_body = head || status < 200 || status == 204 || status == 304;
    if (!no_body) {
      if (lower(reply.header("transfer-encoding")) == "chunked") {
        if (!read_chunked(&reply)) return reply;
      } else if (reply.has_header("content-length")) {
        const size_t n = std::strtoull(reply.header("content-length").c_str(), nullptr, 10);
        if (!read_exact(n, &reply.body)) return reply;
      } else {
        while (fill()) {
        }
        reply.body = std::move(buf_);
        buf_.clear();
      }
    }
    reply.status = status;
    return reply;
  }

  HttpReply request(const std::string& method, const std::string& target,
                    const std::string& body = {}, const HeaderList& headers = {}) {
    if (!send_request(method, target, body, headers)) return {};
    return read_reply(method == "HEAD");
  }

  // Reads until `marker` has arrived (kept for read_reply); false on EOF, error or timeout.
  bool wait_for(std::string_view marker) {
    while (buf_.find(marker) == std::string::npos) {
      if (!fill()) return false;
    }
    return true;
  }

  // True when the server closes the connection (EOF or reset) within the read timeout;
  // bytes that arrive before it are discarded.
  bool wait_closed() {
    buf_.clear();
    char tmp[4096];
    for (;;) {
      const ssize_t n = ::recv(fd_, tmp, sizeof(tmp), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n == 0) return true;
      if (n < 0) return errno == ECONNRESET;
    }
  }

 private:
  static std::string lower(std::string s) {
    for (char& c : s) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    return s;
  }

  // Appends what the socket has to buf_; false on EOF, error or timeout.
  bool fill() {
    if (fd_ < 0) return false;
    char tmp[16384];
    for (;;) {
      const ssize_t n = ::recv(fd_, tmp, sizeof(tmp), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      buf_.append(tmp, static_cast<size_t>(n));
      return true;
    }
  }

  bool read_exact(size_t n, std::string* out) {
    while (buf_.size() < n) {
      if (!fill()) return false;
    }
    out->append(buf_, 0, n);
    buf_.erase(0, n);
    return true;
  }

  bool read_line(std::string* line) {
    size_t end = 0;
    while ((end = buf_.find("\r\n")) == std::string::npos) {
      if (!fill()) return false;
    }
    *line = buf_.substr(0, end);
    buf_.erase(0, end + 2);
    return true;
  }

  bool read_chunked(HttpReply* reply) {
    for (;;) {
      std::string line;
      if (!read_line(&line)) return false;
      const size_t size = std::strtoull(line.c_str(), nullptr, 16);
      if (size == 0) {
        do {  // trailers, up to the empty line
          if (!read_line(&line)) return false;
        } while (!line.empty());
        return true;
      }
      std::string chunk;
      if (!read_exact(size, &chunk) || !read_line(&line)) return false;
      reply->body += chunk;
      reply->chunks.push_back(std::move(chunk));
    }
  }

  int fd_ = -1;
  std::string buf_;
};

// One request on a fresh connection.
inline HttpReply http_request(uint16_t port, const std::string& method, const std::string& target,
                              const std::string& body = {}, const HeaderList& headers = {}) {
  HttpClient client(port);
  return client.request(method, target, body, headers);
}

// The first "text" string of an OpenAI completion body, still JSON-escaped (enough to compare
// two completions); a marker naming the body when there is none.
inline std::string completion_text(const std::string& body) {
  const std::string key = "\"text\":\"";
  const size_t at = body.find(key);
  if (at == std::string::npos) return "<no text in " + body + ">";
  size_t end = at + key.size();
  while (end < body.size() && body[end] != '"') end += body[end] == '\\' ? 2 : 1;
  return body.substr(at + key.size(), end - at - key.size());
}

// POSTs every body to /v1/completions at once, one connection and thread each; returns each
// reply's completion_text(), or "HTTP <status><body>" for a reply that is not 200.
inline std::vector<std::string> concurrent_completions(uint16_t port,
                                                       const std::vector<std::string>& bodies) {
  std::vector<std::string> texts(bodies.size());
  std::vector<std::thread> clients;
  for (size_t i = 0; i < bodies.size(); ++i) {
    clients.emplace_back([&, i] {
      HttpReply reply = http_request(port, "POST", "/v1/completions", bodies[i]);
      texts[i] = reply.status == 200 ? completion_text(reply.body)
                                     : "HTTP " + std::to_string(reply.status) + reply.body;
    });
  }
  for (std::thread& c : clients) c.join();
  return texts;
}

}  // namespace cohort::testing
