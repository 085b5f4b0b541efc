#include "config/yaml_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <istream>
#include <streambuf>
#include <unordered_map>
#include <vector>

#include "common/input_file.h"

namespace repro_audit {
namespace {

// Aliases may expand to as many nodes as the text has bytes, plus this: far beyond any real use of
// aliases, far below what a few lines of nested ones (a "billion laughs") stand for.
constexpr std::size_t kAliasSlack = 100000;

// yaml-cpp reads streams only; this one reads the text in place instead of copying it.
class TextBuffer : public std::streambuf {
 public:
  explicit TextBuffer(const std::string& text) {
    char* start = const_cast<char*>(text.data());  // the get area is only read
    setg(start, start, start + text.size());
  }
};

// An event of an anchored node, kept to be sent again for each alias to it.
struct Event {
  enum class Kind { null, scalar, alias, sequence_start, sequence_end, map_start, map_end };
  explicit Event(Kind kind, const YAML::Mark& mark = {}, std::string tag = "", std::string value = "",
                 YAML::anchor_t alias_of = YAML::NullAnchor,
                 YAML::EmitterStyle::value style = YAML::EmitterStyle::Default)
      : kind(kind), mark(mark), tag(std::move(tag)), value(std::move(value)), alias_of(alias_of), style(style) {}
  Kind kind;
  YAML::Mark mark;
  std::string tag;
  std::string value;
  YAML::anchor_t alias_of;
  YAML::EmitterStyle::value style;
};

// What an alias to an anchored node adds, known once the node is complete.
struct Anchor {
  std::string name;
  bool complete = false;
  std::size_t nodes = 1;
  std::size_t height = 0;  // nested collections in it, itself included
  bool is_scalar = false;
  std::string scalar;                          // its text, for an alias used as a key
  std::size_t first_event = 0, end_event = 0;  // its recorded events
};

struct Collection {
  bool is_map = false;
  YAML::anchor_t anchor = YAML::NullAnchor;
  std::size_t nodes = 1;                      // itself and everything in it, aliases expanded
  std::size_t height = 1;                     // levels of collections, itself included
  bool at_key = true;                         // a map's next node is a key
  std::unordered_map<std::string, int> keys;  // a map's keys, each with the line where it first appears
};

// Checks each event as it comes, and forwards it (aliases expanded) when there is a next handler.
class CheckedEvents : public YAML::EventHandler {
 public:
  CheckedEvents(const YamlReader& reader, const std::string& text, std::size_t alias_budget, YAML::EventHandler* next)
      : reader_(reader), text_(text), alias_budget_(alias_budget), next_(next) {}

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ > 1) reader_.fail(mark, "a second YAML document starts here; the file must hold one document");
    if (next_) next_->OnDocumentStart(mark);
  }
  void OnDocumentEnd() override {
    if (next_) next_->OnDocumentEnd();
  }
  void OnAnchor(const YAML::Mark&, const std::string& name) override { anchor_name_ = name; }

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    static const std::string null_key = "null";
    scalar(mark, anchor, null_key, Event::Kind::null, "");
    if (next_) next_->OnNull(mark, YAML::NullAnchor);
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    // A NUL would end every message that quotes the value; YAML's escape "\0" is the only way to one.
    if (value.find('\0') != std::string::npos) reader_.fail(mark, "a value holds a NUL character (\"\\0\")");
    if (!closed_quote(mark)) reader_.fail(mark, "a quoted value opens here and is never closed");
    scalar(mark, anchor, value, Event::Kind::scalar, tag);
    if (next_) next_->OnScalar(mark, tag, YAML::NullAnchor, value);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override;

  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value style) override {
    start(Event(Event::Kind::sequence_start, mark, tag, "", YAML::NullAnchor, style), anchor);
  }
  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value style) override {
    start(Event(Event::Kind::map_start, mark, tag, "", YAML::NullAnchor, style), anchor);
  }
  void OnSequenceEnd() override { end(Event::Kind::sequence_end); }
  void OnMapEnd() override { end(Event::Kind::map_end); }

 private:
  // yaml-cpp takes a quote left open at the end of the file for a value running to the end: the text
  // from the opening quote must hold its closing one.
  bool closed_quote(const YAML::Mark& mark) const {
    if (mark.pos < 0 || static_cast<std::size_t>(mark.pos) >= text_.size()) return true;
    const char quote = text_[mark.pos];
    if (quote != '"' && quote != '\'') return true;
    for (std::size_t i = mark.pos + 1; i < text_.size(); ++i) {
      if (quote == '"' && text_[i] == '\\') {
        ++i;
      } else if (text_[i] == quote) {
        if (quote == '\'' && i + 1 < text_.size() && text_[i + 1] == '\'') {
          ++i;  // '' is a quote inside single quotes
          continue;
        }
        return true;
      }
    }
    return false;
  }

  bool recording() const { return next_ && anchored_open_ > 0; }

  // A node begins: as a map's key, it must not have been seen before in that map. (A list or map as
  // a key is left to the loaders, which take single values only.)
  void enter(const YAML::Mark& mark, const std::string* key) {
    if (open_.empty() || !open_.back().is_map) return;
    auto& map = open_.back();
    map.at_key = !map.at_key;
    if (map.at_key || !key) return;
    const auto [first, added] = map.keys.emplace(*key, mark.line + 1);
    if (!added) reader_.fail(mark, fmt::format("duplicate key '{}' (first at line {})", *key, first->second));
  }

  // A complete node of `nodes` nodes and `height` levels joins the innermost collection.
  void count(std::size_t nodes, std::size_t height) {
    if (open_.empty()) return;
    open_.back().nodes += nodes;
    open_.back().height = std::max(open_.back().height, height + 1);
  }

  Anchor& define(YAML::anchor_t id) {
    if (anchors_.size() <= id) anchors_.resize(id + 1);
    anchors_[id].name = anchor_name_;
    return anchors_[id];
  }

  void scalar(const YAML::Mark& mark, YAML::anchor_t anchor, const std::string& text, Event::Kind kind,
              const std::string& tag) {
    enter(mark, &text);
    count(1, 0);
    if (anchor == YAML::NullAnchor) {
      if (recording()) recorded_.emplace_back(kind, mark, tag, text);
      return;
    }
    auto& defined = define(anchor);
    defined.complete = true;
    defined.is_scalar = true;
    defined.scalar = text;
    defined.first_event = recorded_.size();
    if (next_) recorded_.emplace_back(kind, mark, tag, text);
    defined.end_event = recorded_.size();
  }

  void start(Event&& event, YAML::anchor_t anchor) {
    enter(event.mark, nullptr);
    if (open_.size() >= static_cast<std::size_t>(kMaxNestingDepth))
      reader_.fail(event.mark, fmt::format("YAML nested deeper than {} levels", kMaxNestingDepth));
    if (anchor != YAML::NullAnchor) {
      define(anchor).first_event = recorded_.size();
      ++anchored_open_;
    }
    open_.emplace_back();
    open_.back().is_map = event.kind == Event::Kind::map_start;
    open_.back().anchor = anchor;
    send(event);
    if (recording()) recorded_.push_back(std::move(event));
  }

  void end(Event::Kind kind) {
    const auto done = std::move(open_.back());
    open_.pop_back();
    if (recording()) recorded_.emplace_back(kind);
    if (done.anchor != YAML::NullAnchor) {
      auto& defined = anchors_[done.anchor];
      defined.complete = true;
      defined.nodes = done.nodes;
      defined.height = done.height;
      defined.end_event = recorded_.size();
      --anchored_open_;
    }
    count(done.nodes, done.height);
    send(Event(kind));
  }

  void send(const Event& event) {
    if (!next_) return;
    switch (event.kind) {
      case Event::Kind::null:
        return next_->OnNull(event.mark, YAML::NullAnchor);
      case Event::Kind::scalar:
        return next_->OnScalar(event.mark, event.tag, YAML::NullAnchor, event.value);
      case Event::Kind::alias:
        return replay(anchors_[event.alias_of]);
      case Event::Kind::sequence_start:
        return next_->OnSequenceStart(event.mark, event.tag, YAML::NullAnchor, event.style);
      case Event::Kind::sequence_end:
        return next_->OnSequenceEnd();
      case Event::Kind::map_start:
        return next_->OnMapStart(event.mark, event.tag, YAML::NullAnchor, event.style);
      case Event::Kind::map_end:
        return next_->OnMapEnd();
    }
  }

  void replay(const Anchor& anchor) {
    for (std::size_t i = anchor.first_event; i < anchor.end_event; ++i) send(recorded_[i]);
  }

  const YamlReader& reader_;
  const std::string& text_;
  const std::size_t alias_budget_;
  YAML::EventHandler* next_;
  int documents_ = 0;
  std::vector<Collection> open_;
  std::vector<Anchor> anchors_;  // by yaml-cpp's anchor number
  std::string anchor_name_;
  int anchored_open_ = 0;
  std::vector<Event> recorded_;  // the events of anchored nodes, when forwarding
  std::size_t expanded_ = 0;     // nodes that aliases stood for so far
};

void CheckedEvents::OnAlias(const YAML::Mark& mark, YAML::anchor_t id) {
  if (id >= anchors_.size()) reader_.fail(mark, "an alias to an unknown anchor");
  const auto& anchor = anchors_[id];
  // yaml-cpp names the node at its start, so an alias inside it would make a cycle.
  if (!anchor.complete) reader_.fail(mark, fmt::format("alias *{} is inside the node it names", anchor.name));
  enter(mark, anchor.is_scalar ? &anchor.scalar : nullptr);
  if (open_.size() + anchor.height > static_cast<std::size_t>(kMaxNestingDepth))
    reader_.fail(mark, fmt::format("alias *{} nests the YAML deeper than {} levels", anchor.name, kMaxNestingDepth));
  expanded_ += anchor.nodes;
  if (expanded_ > alias_budget_)
    reader_.fail(mark, fmt::format("aliases expand to more than {} nodes, far more than a file of this size holds "
                                   "(nested aliases: an alias bomb?)",
                                   alias_budget_));
  count(anchor.nodes, anchor.height);
  if (recording()) recorded_.emplace_back(Event::Kind::alias, mark, "", "", id);
  if (next_) replay(anchor);
}

}  // namespace

YAML::Node YamlReader::load(const std::string& text) const {
  check(text, nullptr);
  TextBuffer buffer(text);
  std::istream in(&buffer);
  try {
    return YAML::Load(in);
  } catch (const YAML::Exception& error) {
    fail(error.mark, error.msg);
  }
}

void YamlReader::stream(const std::string& text, YAML::EventHandler& handler) const { check(text, &handler); }

void YamlReader::check(const std::string& text, YAML::EventHandler* handler) const {
  TextBuffer buffer(text);
  std::istream in(&buffer);
  CheckedEvents events(*this, text, text.size() + kAliasSlack, handler);
  try {
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(events)) {
    }
  } catch (const YAML::Exception& error) {
    fail(error.mark, error.msg);
  }
}

void YamlReader::fail(const YAML::Mark& mark, const std::string& message) const {
  throw UserError(source_, std::max(mark.line, 0) + 1, std::max(mark.column, 0) + 1, message);
}

}  // namespace repro_audit
