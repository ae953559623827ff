// SPDX-License-Identifier: Apache-2.0
#include "sim/report/closed_form_note.hpp"

#include <vector>

#include "sim/report/format.hpp"

namespace ppsim {

std::string note_figure_name(const ClosedFormNote& note) {
  std::string name(figure_name(note.figure));
  if (note.device >= 0) name += " d" + std::to_string(note.device);
  return name;
}

std::string note_text(const ClosedFormNote& note) {
  if (note.holds) return note.expression + " = " + format_figure(note.predicted) + " (" + note.verdict + ")";
  return note.expression + ": " + note.verdict;
}

std::string bubble_caption(const std::vector<ClosedFormNote>& notes) {
  // Of several forms for one figure, the one whose regime holds; device 0 for per-device figures.
  std::vector<const ClosedFormNote*> chosen;
  for (const Figure figure : {Figure::kBubbleRatio, Figure::kBubbleOverhead, Figure::kDeviceBubble}) {
    const ClosedFormNote* best = nullptr;
    for (const ClosedFormNote& note : notes) {
      if (note.figure != figure || note.device > 0) continue;
      if (best == nullptr || (note.holds && !best->holds)) best = &note;
    }
    if (best != nullptr) chosen.push_back(best);
  }
  if (chosen.empty()) return "no published closed form for this schedule's bubble";
  // Those that hold; when none does, the first with its regime, so the line stays short.
  std::string caption;
  for (const ClosedFormNote* note : chosen) {
    if (!note->holds) continue;
    caption += (caption.empty() ? "closed form: " : " · ") + note_figure_name(*note) + " " + note_text(*note);
  }
  if (caption.empty()) caption = "closed form: " + note_figure_name(*chosen.front()) + " " + note_text(*chosen.front());
  return caption;
}

}  // namespace ppsim
