#include "table_printer.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>

namespace flashvision::tool {

namespace {

constexpr std::size_t kColumns = 10;
using Row = std::array<std::string, kColumns>;

std::string format(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

/// Microseconds below one millisecond: there launch and threading overheads dominate.
std::string format_time(double ms) {
  return ms < 1.0 ? format("%.1f us", ms * 1e3) : format("%.2f ms", ms);
}

std::string format_rate(const BenchRecord& r) {
  if (!r.tflops) return "-";
  return r.device == Device::cpu ? format("%.1f", *r.tflops * 1e3) : format("%.1f", *r.tflops);
}

std::string format_error(const BenchRecord& r) {
  if (!r.max_err) return "-";
  const std::string text = std::isnan(*r.max_err) ? "nan" : format("%.2e", *r.max_err);
  return record_failed_check(r) ? text + " FAIL" : text;
}

Row make_row(const BenchRecord& r) {
  return {r.case_name,
          format_shape(r.shape),
          r.impl,
          r.kernel.value_or("-"),
          r.pass,
          r.ms ? format_time(*r.ms) : "-",
          format_rate(r),
          r.peak_bytes ? format("%.1f", static_cast<double>(*r.peak_bytes) / (1 << 20)) : "n/a",
          format_error(r),
          std::to_string(r.reps)};
}

}  // namespace

void print_table(std::ostream& out, const std::vector<BenchRecord>& records) {
  const bool cpu_only = std::all_of(records.begin(), records.end(),
                                    [](const BenchRecord& r) { return r.device == Device::cpu; });
  const Row header = {"case",
                      "BxHxNqxNkxD",
                      "impl",
                      "kernel",
                      "pass",
                      "time (median)",
                      cpu_only ? "GFLOP/s" : "TFLOP/s",
                      "peak MB",
                      "max_err",
                      "reps"};
  std::vector<Row> rows = {header};
  for (const BenchRecord& r : records) rows.push_back(make_row(r));
  std::array<std::size_t, kColumns> width{};
  for (const Row& row : rows) {
    for (std::size_t c = 0; c < kColumns; ++c) width[c] = std::max(width[c], row[c].size());
  }
  const auto print_cells = [&](const Row& row, std::size_t columns) {
    for (std::size_t c = 0; c < columns; ++c) {
      const bool numeric = c >= 5;
      const std::size_t pad = width[c] - row[c].size();
      out << (c == 0 ? "" : "  ") << (numeric ? std::string(pad, ' ') : "") << row[c]
          << (numeric || c + 1 == columns ? "" : std::string(pad, ' '));
    }
  };
  print_cells(header, kColumns);
  out << '\n';
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (records[i].error) {
      print_cells(rows[i + 1], 5);
      out << "  not run: " << *records[i].error << '\n';
    } else {
      print_cells(rows[i + 1], kColumns);
      out << '\n';
    }
  }
  std::set<std::string> notes;
  for (const BenchRecord& r : records) {
    if (!r.note.empty() && notes.insert(r.case_name + ": " + r.note).second) {
      out << "  * " << r.case_name << ": " << r.note << '\n';
    }
  }
}

}  // namespace flashvision::tool
