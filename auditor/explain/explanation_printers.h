#pragma once
// The explanation as text for the terminal, JSON, Markdown and a self-contained HTML page.
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "explain/explain.h"
#include "explain/explanation_text.h"

namespace repro_audit {

inline constexpr const char* kExplanationSchema = "repro-audit.explanation/1";

void print_explanation(const Explanation& explanation, std::ostream& out);
nlohmann::json explanation_to_json(const Explanation& explanation);
std::string render_explanation_markdown(const Explanation& explanation);
std::string render_explanation_html(const Explanation& explanation);

}  // namespace repro_audit
