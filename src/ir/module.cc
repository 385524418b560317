#include "ir/module.h"

namespace stablert::ir {

std::string Location::ToString() const {
  if (file.empty() && name.empty()) return "unknown location";
  std::string out = name;
  if (!file.empty()) {
    if (!out.empty()) out += " at ";
    out += file + ":" + std::to_string(line) + ":" + std::to_string(column);
  }
  return out;
}

void Location::FillFrom(const Location& other) {
  if (name.empty()) name = other.name;
  if (file.empty()) {
    file = other.file;
    line = other.line;
    column = other.column;
  }
}

const Function* Module::FindFunction(std::string_view name) const {
  for (const Function& f : functions)
    if (f.name == name) return &f;
  return nullptr;
}

const Function* Module::EntryFunction() const {
  if (const Function* main = FindFunction("main")) return main;
  const Function* only = nullptr;
  for (const Function& f : functions) {
    if (!f.is_public) continue;
    if (only) return nullptr;
    only = &f;
  }
  return only;
}

}  // namespace stablert::ir
