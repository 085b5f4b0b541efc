#include "common/input_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>
#include <vector>

#include "common/byte_size.h"
#include "common/user_error.h"

namespace repro_audit {
using nlohmann::json;
namespace {

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() { ::close(fd_); }
  int get() const { return fd_; }

 private:
  int fd_;
};

UserError cannot_read(const std::string& path, const std::string& what, int error) {
  return UserError(fmt::format("{}: cannot read the {}: {}", path, what, std::generic_category().message(error)));
}

std::string with_article(const std::string& noun) {
  const bool vowel = !noun.empty() && std::string_view("aeiou").find(noun[0]) != std::string_view::npos;
  return (vowel ? "an " : "a ") + noun;
}

// What a file that is not a regular file is, or "" for a regular one.
std::string not_regular(mode_t mode) {
  if (S_ISREG(mode)) return "";
  if (S_ISDIR(mode)) return "is a folder, not a regular file";
  if (S_ISFIFO(mode)) return "is a FIFO, not a regular file";
  if (S_ISCHR(mode)) return "is a character device, not a regular file";
  if (S_ISBLK(mode)) return "is a block device, not a regular file";
  if (S_ISSOCK(mode)) return "is a socket, not a regular file";
  return "is not a regular file";
}

// Thrown by the JSON builder at the first value nested too deep; becomes a UserError with the offset.
struct TooDeep {};

// Thrown at the first byte that is not JSON; becomes a UserError with its line and column.
struct InvalidJson {
  std::size_t position;  // nlohmann's: bytes read, the offending one included
  std::string detail;
};

// Builds the JSON value from nlohmann's SAX events, as json::parse does, with two additions: a
// nesting limit, and elements of one root array handed out as they complete instead of kept.
// (nlohmann's callback parser would do both, but it scans the enclosing container after each object
// that ends: quadratic in the length of an array of objects.)
class JsonBuilder {
 public:
  JsonBuilder(std::string source, std::string streamed_key, const std::function<void(json&&)>* take)
      : source_(std::move(source)), streamed_key_(std::move(streamed_key)), take_(take) {}

  bool null() { return add(nullptr); }
  bool boolean(bool value) { return add(value); }
  bool number_integer(json::number_integer_t value) { return add(value); }
  bool number_unsigned(json::number_unsigned_t value) { return add(value); }
  bool number_float(json::number_float_t value, const json::string_t&) { return add(value); }
  bool string(json::string_t& value) { return add(std::move(value)); }
  bool binary(json::binary_t& value) { return add(json(std::move(value))); }
  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  // A key twice in one object would leave the readers to pick one (nlohmann keeps the last): two
  // commands could then read one file differently. YAML inputs refuse the same (config/yaml_reader.h).
  bool key(json::string_t& key) {
    const json& object = *open_.back();  // the streamed array stays in its object, empty
    if (object.contains(key))
      throw UserError(fmt::format("{}: invalid JSON: the key {} appears twice in one object", source_,
                                  json(key.substr(0, 80)).dump(-1, ' ', true, json::error_handler_t::replace)));
    key_ = std::move(key);
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const json::exception& error) {
    throw InvalidJson{position, error.what()};
  }

  json take_result() { return std::move(root_); }

 private:
  bool open(json&& container) {
    if (open_.size() >= static_cast<std::size_t>(kMaxNestingDepth)) throw TooDeep{};
    const bool streamed_array =
        take_ && open_.size() == 1 && open_[0]->is_object() && container.is_array() && key_ == streamed_key_;
    open_.push_back(place(std::move(container)));
    if (streamed_array) streaming_ = true;
    return true;
  }

  bool close() {
    open_.pop_back();
    if (open_.size() == 1) streaming_ = false;
    if (streaming_ && open_.size() == 2) {  // an element of the streamed array is complete
      (*take_)(std::move(open_.back()->back()));
      open_.back()->erase(open_.back()->size() - 1);
    }
    return true;
  }

  bool add(json&& value) {
    if (streaming_ && open_.size() == 2)
      (*take_)(std::move(value));
    else
      place(std::move(value));
    return true;
  }

  // Only the innermost open container grows, so the pointers to the open ones stay valid.
  json* place(json&& value) {
    if (open_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    json& parent = *open_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(value));
      return &parent.back();
    }
    return &(parent[key_] = std::move(value));
  }

  std::string source_;
  std::string streamed_key_;
  const std::function<void(json&&)>* take_;
  json root_;
  std::vector<json*> open_;
  std::string key_;
  bool streaming_ = false;
};

// Where the first container nested deeper than `depth` opens. nlohmann's parser gives a SAX handler
// no positions, so the text (valid JSON up to that point) is scanned again.
std::size_t offset_of_depth(const std::string& text, int depth) {
  int level = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++level > depth) return i;
    } else if (c == ']' || c == '}') {
      --level;
    }
  }
  return text.size();
}

// "SOURCE:LINE:COLUMN: invalid JSON: what was expected", as the YAML readers place their mistakes.
UserError invalid_json(const std::string& text, const std::string& source, const InvalidJson& error) {
  const auto before = text.substr(0, std::min(text.size(), error.position > 0 ? error.position - 1 : 0));
  const auto line = 1 + std::count(before.begin(), before.end(), '\n');
  const auto line_start = before.rfind('\n');
  const auto column = 1 + (line_start == std::string::npos ? before.size() : before.size() - line_start - 1);
  // nlohmann's own text says the place again ("[json.exception...] parse error at line 1, column 1: ").
  auto detail = error.detail;
  if (const auto at = detail.find(", column "); at != std::string::npos)
    if (const auto end = detail.find(": ", at); end != std::string::npos) detail.erase(0, end + 2);
  return UserError(fmt::format("{}:{}:{}: invalid JSON: {}", source, line, column, detail));
}

}  // namespace

std::string input_file_problem(const std::string& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) {
      struct stat link {};
      return ::lstat(path.c_str(), &link) == 0 ? "is a link to nothing (does not exist)" : "does not exist";
    }
    return std::generic_category().message(errno);
  }
  return not_regular(status.st_mode);
}

std::string read_input_file(const std::string& path, const std::string& what, std::size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO would otherwise wait for a writer; the type is checked before any read.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw cannot_read(path, what, errno);
  FileDescriptor file(fd);
  struct stat status {};
  if (::fstat(fd, &status) != 0) throw cannot_read(path, what, errno);
  if (S_ISDIR(status.st_mode)) throw cannot_read(path, what, EISDIR);
  // A device (/dev/zero, /dev/urandom) may never end, a FIFO may never be written: neither is a file
  // of this tool's.
  if (const auto problem = not_regular(status.st_mode); !problem.empty())
    throw UserError(fmt::format("{}: cannot read the {}: {}", path, what, problem));
  std::string text;
  // One allocation; a file of /proc reports no size and grows.
  if (status.st_size > 0) text.reserve(std::min(static_cast<std::size_t>(status.st_size), max_bytes) + 1);
  constexpr std::size_t chunk = std::size_t{1} << 20;
  for (;;) {
    // One byte past the limit tells a file at the limit from a larger one. Reads stay within the
    // allocation while it has room: the last one, which finds the end, would otherwise double it.
    const std::size_t used = text.size();
    const std::size_t room = text.capacity() > used ? text.capacity() - used : chunk;
    const std::size_t want = std::min({chunk, room, max_bytes + 1 - used});
    text.resize(used + want);
    const ssize_t got = ::read(fd, text.data() + used, want);
    if (got < 0) {
      const int error = errno;
      text.resize(used);
      if (error == EINTR) continue;
      throw cannot_read(path, what, error);
    }
    text.resize(used + static_cast<std::size_t>(got));
    if (got == 0) break;
    if (text.size() > max_bytes)
      throw UserError(
          fmt::format("{}: larger than {}, the limit for {}", path, byte_size_text(max_bytes), with_article(what)));
  }
  // Editors on some systems start UTF-8 files with a byte-order mark; JSON and YAML readers differ on it.
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);
  return text;
}

nlohmann::json parse_json_input(const std::string& text, const std::string& source) {
  return parse_json_input(text, source, "", {});
}

nlohmann::json parse_json_input(const std::string& text, const std::string& source, const std::string& streamed_key,
                                const std::function<void(nlohmann::json&&)>& take) {
  JsonBuilder builder(source, streamed_key, take ? &take : nullptr);
  try {
    json::sax_parse(text, &builder);
  } catch (const InvalidJson& error) {
    throw invalid_json(text, source, error);
  } catch (const TooDeep&) {
    throw UserError(fmt::format("{}: byte {}: JSON nested deeper than {} levels", source,
                                offset_of_depth(text, kMaxNestingDepth) + 1, kMaxNestingDepth));
  } catch (const json::exception& error) {  // e.g. a number too large for any numeric type
    throw UserError(fmt::format("{}: invalid JSON: {}", source, error.what()));
  }
  return builder.take_result();
}

bool is_digest(std::string_view text) {
  return text.size() == 32 &&
         std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

}  // namespace repro_audit
