#include "results_json.h"

#include <fstream>

#include "flashvision/error.h"
#include "flashvision/version.h"
#include "json_writer.h"

namespace flashvision::tool {

namespace {

std::string meta_json(const RunMeta& meta) {
  JsonWriter w;
  w.begin_object();
  w.key("date").value(meta.date);
  w.key("host").value(meta.host);
  w.key("gpu").value(meta.device.gpu);
  w.key("driver").value(meta.device.driver);
  w.key("cuda").value(meta.device.cuda);
  w.key("torch").null();
  w.key("cudnn").null();
  w.key("commit").value(meta.commit);
  w.key("commit_dirty").value(meta.commit_dirty);
  w.key("command").value(meta.command);
  w.key("flashvision").value(kVersion);
  w.key("build_commit").value(build_commit());
  w.key("devices").begin_array();
  for (const std::string& line : meta.devices) w.value(line);
  w.end_array();
  w.key("seed").value(static_cast<int64_t>(meta.seed));
  w.end_object();
  return w.str();
}

std::string record_json(const BenchRecord& r) {
  JsonWriter w;
  w.begin_object();
  w.key("case").value(r.case_name);
  w.key("B").value(r.shape.batch);
  w.key("H").value(r.shape.heads);
  w.key("Hkv").value(r.shape.heads);
  w.key("Nq").value(r.shape.seqlen_q);
  w.key("Nk").value(r.shape.seqlen_k);
  w.key("D").value(r.shape.head_dim);
  w.key("dtype").value(to_string(r.dtype));
  w.key("causal").value(r.causal);
  w.key("device").value(to_string(r.device));
  w.key("impl").value(r.impl);
  if (r.kernel) w.key("kernel").value(*r.kernel);
  w.key("pass").value(r.pass);
  w.key("ms").value(r.ms);
  w.key("tflops").value(r.tflops);
  w.key("peak_bytes").value(r.peak_bytes);
  w.key("max_err").value(r.max_err);
  if (r.pass != "fwd") {
    w.key("max_err_dq").value(r.max_err_dq);
    w.key("max_err_dk").value(r.max_err_dk);
    w.key("max_err_dv").value(r.max_err_dv);
  }
  w.key("reps").value(r.reps);
  if (r.threads) w.key("threads").value(*r.threads);
  if (r.error) w.key("error").value(*r.error);
  if (!r.note.empty()) w.key("note").value(r.note);
  w.end_object();
  return w.str();
}

}  // namespace

std::string results_json(const RunMeta& meta, const std::vector<BenchRecord>& records) {
  std::string text = "{\"meta\": " + meta_json(meta) + ",\n \"records\": [";
  for (std::size_t i = 0; i < records.size(); ++i)
    text += (i == 0 ? "\n  " : ",\n  ") + record_json(records[i]);
  return text + "\n ]}\n";
}

void write_results_json(const std::string& path, const RunMeta& meta,
                        const std::vector<BenchRecord>& records) {
  std::ofstream file(path);
  file << results_json(meta, records);
  file.close();
  if (!file) throw Error("--json: cannot write '" + path + "'");
}

}  // namespace flashvision::tool
