// make_trained_models: trains the models that ship with the page (web/models/) with the core's
// own trainer, deterministically, and writes each as NAME.safetensors plus one models.json
// catalogue with the metrics each model claims (scripts/data/make-trained-models.sh runs it).
//   make_trained_models OUT_DIR [NAME …]   (no NAME: every model; unknown names are an error)
//   make_trained_models --check DIR [NAME …]   (no NAME: induction) retrains and compares with
//     the shipped DIR/NAME.safetensors and DIR/models.json: byte for byte (and the catalogue
//     entry text) when this machine's SIMD architecture is the one models.json records, else
//     the claimed metrics within kTolerance (another CPU rounds differently). Exit 1 on a
//     difference.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "attention/model/model.hpp"
#include "attention/ops/gelu.hpp"
#include "attention/ops/positional.hpp"
#include "attention/ops/simd.hpp"
#include "attention/train/english_text.hpp"
#include "attention/train/head_scores.hpp"
#include "attention/train/probe.hpp"
#include "attention/train/tasks.hpp"
#include "attention/train/trainer.hpp"

namespace {

// One shipped model: what it is, how it is made.
struct Recipe {
  std::string name, title, description;
  attn::SmallModelOptions model;
  attn::TrainerConfig trainer;
  std::size_t steps = 0;
};

// Both models: 2 layers x 4 heads, d_model 64, context 64, learned positions, LayerNorm, seed 1,
// trained by AdamW (batch 32, weight decay 0.01, clip 1, task seed 1).
Recipe base(std::string name, std::string title, std::string description, attn::TaskKind task,
            std::size_t vocab, bool mlp, double lr, std::size_t steps) {
  Recipe r;
  r.name = std::move(name);
  r.title = std::move(title);
  r.description = std::move(description);
  r.model = {.vocab = vocab, .context = 64, .d_model = 64, .heads = 4, .layers = 2, .mlp = mlp};
  r.model.positional = attn::PositionalKind::Learned;
  r.model.seed = 1;
  r.trainer.task = task;
  r.trainer.batch = 32;
  r.trainer.seed = 1;
  r.trainer.optimizer.lr = lr;
  r.trainer.optimizer.weight_decay = 0.01;
  r.trainer.optimizer.clip = 1.0;
  r.steps = steps;
  return r;
}

std::vector<Recipe> recipes() {
  Recipe induction =
      base("induction", "Induction heads (2 layers)",
           "2 layers x 4 heads trained on random letters followed by their repeat: a layer-1 head "
           "attends to the previous token, and a layer-2 head attends to the token after the "
           "earlier copy of the current one (an induction head).",
           attn::TaskKind::Induction, 52, false, 1e-3, 1000);
  Recipe english =
      base("english", "English characters (2 layers, MLP)",
           "A small character language model (2 layers x 4 heads, d_model 64, MLP, LayerNorm) "
           "trained to predict the next character of Ambrose Bierce's The Devil's Dictionary "
           "(1911, public domain).",
           attn::TaskKind::English, 48, true, 3e-3, 1500);
  english.trainer.optimizer.warmup_steps = 100;
  english.trainer.optimizer.total_steps = 1500;
  english.trainer.optimizer.min_lr = 3e-4;
  return {induction, english};
}

// Numbers as JSON: 9 significant digits round-trip a float; integers stay integers.
std::string num(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", value);
  return buffer;
}
std::string num(std::size_t value) {
  return std::to_string(value);
}
std::string str(const std::string& value) {
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
      out += buffer;
    } else {
      out += c;
    }
  }
  return out + "\"";
}
std::string boolean(bool value) {
  return value ? "true" : "false";
}
std::string score(double value) {  // NaN: not measured
  return std::isnan(value) ? "null" : num(value);
}

// The cross-entropy of the held-out targets under the training text's character frequencies
// (nats per character): what a model that ignores context can reach.
double unigram_loss(const attn::Task& task) {
  const auto ids = task.encode(attn::english_text());
  const std::size_t train_end = ids.size() / 8 * 7;
  std::vector<double> counts(task.vocabulary().size(), 1.0);  // add-one smoothing
  double total = double(counts.size());
  for (std::size_t i = 0; i < train_end; ++i) counts[std::size_t(ids[i])] += 1.0, total += 1.0;
  const attn::Batch& held = task.held_out();
  double sum = 0.0;
  std::size_t count = 0;
  for (auto target : held.targets) {
    if (target < 0) continue;
    sum -= std::log(counts[std::size_t(target)] / total);
    ++count;
  }
  return sum / double(count);
}

struct Best {
  std::size_t layer = 0, head = 0;
  double score = -1.0;
};

std::string best_json(const Best& best) {
  return "{ \"layer\": " + num(best.layer) + ", \"head\": " + num(best.head) +
         ", \"score\": " + num(best.score) + " }";
}

struct Made {
  std::vector<std::uint8_t> bytes;  // NAME.safetensors
  std::string entry;                // its models.json entry
};

// Trains one model: its file and its catalogue entry.
Made make(const Recipe& r) {
  const auto start = std::chrono::steady_clock::now();
  attn::Model model(r.model);
  attn::Trainer trainer(model, r.trainer);
  attn::TrainReport report;
  const std::size_t chunk = 100;
  for (std::size_t done = 0; done < r.steps; done += chunk) {
    report = trainer.step(std::min(chunk, r.steps - done));
    std::fprintf(stderr, "%s: step %zu loss %.4f held-out loss %.4f accuracy %.4f\n",
                 r.name.c_str(), report.step, report.loss, report.held_out_loss, report.accuracy);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "%s: %zu steps in %.1f s\n", r.name.c_str(), r.steps, seconds);

  const auto bytes = model.save_safetensors();

  const attn::Batch probe = attn::model_probe(model.config());
  const auto scores = attn::model_head_scores(model, probe);
  Best induction, previous;
  std::ostringstream heads;
  for (std::size_t l = 0; l < scores.size(); ++l) {
    for (std::size_t h = 0; h < scores[l].size(); ++h) {
      const attn::HeadScores& s = scores[l][h];
      if (s.induction > induction.score) induction = {l, h, s.induction};
      if (s.previous_token > previous.score) previous = {l, h, s.previous_token};
      heads << (l + h == 0 ? "" : ",\n") << "        { \"layer\": " << l << ", \"head\": " << h
            << ", \"previousToken\": " << score(s.previous_token)
            << ", \"induction\": " << score(s.induction)
            << ", \"sameToken\": " << score(s.same_token)
            << ", \"firstToken\": " << score(s.first_token) << " }";
    }
  }

  const attn::SmallModelOptions& m = r.model;
  const attn::AdamWConfig& o = r.trainer.optimizer;
  const attn::Task& task = trainer.task();
  std::ostringstream j;
  j << "    {\n"
    << "      \"name\": " << str(r.name) << ",\n"
    << "      \"title\": " << str(r.title) << ",\n"
    << "      \"description\": " << str(r.description) << ",\n"
    << "      \"file\": " << str(r.name + ".safetensors") << ",\n"
    << "      \"bytes\": " << bytes.size() << ",\n"
    << "      \"task\": " << str(std::string(attn::task_kind_name(r.trainer.task))) << ",\n"
    << "      \"vocabulary\": " << str(task.vocabulary()) << ",\n"
    << "      \"config\": { \"vocab\": " << m.vocab << ", \"context\": " << m.context
    << ", \"dModel\": " << m.d_model << ", \"heads\": " << m.heads << ", \"layers\": " << m.layers
    << ", \"positional\": " << str(attn::positional_kind_name(m.positional))
    << ", \"layerNorm\": " << boolean(m.layer_norm) << ", \"mlp\": " << boolean(m.mlp)
    << ", \"tied\": " << boolean(m.tied) << ", \"bias\": " << boolean(m.bias)
    << ", \"gelu\": " << str(attn::gelu_kind_name(m.gelu)) << ", \"seed\": " << m.seed << " },\n"
    << "      \"training\": { \"steps\": " << r.steps
    << ", \"task\": " << str(std::string(attn::task_kind_name(r.trainer.task)))
    << ", \"lr\": " << num(o.lr) << ", \"batch\": " << r.trainer.batch
    << ", \"weightDecay\": " << num(o.weight_decay) << ", \"clip\": " << num(o.clip)
    << ", \"seed\": " << r.trainer.seed << ", \"beta1\": " << num(o.beta1)
    << ", \"beta2\": " << num(o.beta2) << ", \"eps\": " << num(o.eps)
    << ", \"warmup\": " << o.warmup_steps << ", \"totalSteps\": " << o.total_steps
    << ", \"minLr\": " << num(o.min_lr) << ", \"heldOut\": " << r.trainer.held_out << " },\n"
    << "      \"metrics\": {\n"
    << "        \"heldOutLoss\": " << num(report.held_out_loss) << ",\n"
    << "        \"heldOutAccuracy\": " << num(report.accuracy) << ",\n";
  if (r.trainer.task == attn::TaskKind::English) {
    // Heads on real text: the held-out set's first kProbeBatch windows (next-token targets).
    const attn::Batch& held = task.held_out();
    const std::size_t count = attn::kProbeBatch * held.n;
    const attn::Batch text = attn::probe_batch({held.ids.begin(), held.ids.begin() + count}, {},
                                               attn::kProbeBatch, held.n);
    Best text_previous;
    const auto text_scores = attn::model_head_scores(model, text);
    for (std::size_t l = 0; l < text_scores.size(); ++l) {
      for (std::size_t h = 0; h < text_scores[l].size(); ++h) {
        const double s = text_scores[l][h].previous_token;
        if (s > text_previous.score) text_previous = {l, h, s};
      }
    }
    j << "        \"unigramLoss\": " << num(unigram_loss(task)) << ",\n"
      << "        \"textProbe\": \"the held-out set's first " << attn::kProbeBatch
      << " windows\",\n"
      << "        \"bestPreviousTokenHeadOnText\": " << best_json(text_previous) << ",\n";
  }
  j << "        \"bestInductionHead\": " << best_json(induction) << ",\n"
    << "        \"bestPreviousTokenHead\": " << best_json(previous) << ",\n"
    << "        \"heads\": [\n"
    << heads.str() << "\n        ]\n"
    << "      }\n"
    << "    }";
  return {bytes, j.str()};
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}

// The JSON value after "key": at or after `from` in text (a flat scan; our own format).
std::string value_after(const std::string& text, const std::string& key, std::size_t from = 0) {
  const std::size_t at = text.find("\"" + key + "\": ", from);
  if (at == std::string::npos) throw std::runtime_error("models.json has no \"" + key + "\"");
  std::size_t begin = at + key.size() + 4, end = begin;
  if (text[begin] == '"') return text.substr(begin + 1, text.find('"', begin + 1) - begin - 1);
  while (end < text.size() && text[end] != ',' && text[end] != '\n' && text[end] != ' ') ++end;
  return text.substr(begin, end - begin);
}

constexpr double kTolerance = 0.05;  // another CPU: loss (nats) and head scores

// Compares a retrained model with the shipped one; prints what it compared. True when equal.
bool check(const Recipe& r, const Made& made, const std::string& dir) {
  const std::string catalogue = read_file(dir + "/models.json");
  const std::string shipped = read_file(dir + "/" + r.name + ".safetensors");
  const std::string simd = value_after(catalogue, "simd");
  if (simd == attn::simd::arch_name()) {
    const bool same_bytes = shipped.size() == made.bytes.size() &&
                            std::equal(made.bytes.begin(), made.bytes.end(),
                                       reinterpret_cast<const std::uint8_t*>(shipped.data()));
    const bool same_entry = catalogue.find(made.entry) != std::string::npos;
    std::printf("%s: SIMD %s as recorded: file %s, catalogue entry %s\n", r.name.c_str(),
                simd.c_str(), same_bytes ? "identical" : "DIFFERS",
                same_entry ? "identical" : "DIFFERS");
    return same_bytes && same_entry;
  }
  std::printf(
      "%s: this machine's SIMD is %s, models.json records %s: comparing the claimed "
      "metrics within %g instead of the bytes\n",
      r.name.c_str(), attn::simd::arch_name(), simd.c_str(), kTolerance);
  const std::size_t at = catalogue.find("\"name\": \"" + r.name + "\"");
  if (at == std::string::npos) throw std::runtime_error("models.json has no model " + r.name);
  bool ok = true;
  for (const std::string key : {"heldOutLoss", "bestInductionHead", "bestPreviousTokenHead"}) {
    std::string claimed = value_after(catalogue, key, at), measured = value_after(made.entry, key);
    if (claimed == "{") claimed = value_after(catalogue, "score", catalogue.find(key, at));
    if (measured == "{") measured = value_after(made.entry, "score", made.entry.find(key));
    const double difference = std::abs(std::stod(claimed) - std::stod(measured));
    std::printf("  %s: claimed %s, measured %s\n", key.c_str(), claimed.c_str(), measured.c_str());
    ok = ok && difference <= kTolerance;
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const bool checking = !args.empty() && args[0] == "--check";
  if (checking) args.erase(args.begin());
  if (args.empty()) {
    std::fprintf(stderr, "usage: make_trained_models [--check] DIR [NAME ...]\n");
    return 2;
  }
  try {
    const std::string dir = args[0];
    std::vector<std::string> wanted(args.begin() + 1, args.end());
    if (checking && wanted.empty()) wanted = {"induction"};
    const auto all = recipes();
    for (const auto& name : wanted) {
      bool known = false;
      for (const auto& r : all) known = known || r.name == name;
      if (!known) throw std::runtime_error("unknown model '" + name + "'");
    }
    std::string entries;
    bool same = true;
    for (const auto& r : all) {
      bool selected = wanted.empty();
      for (const auto& name : wanted) selected = selected || r.name == name;
      if (!selected) continue;
      const Made made = make(r);
      if (checking) {
        same = check(r, made, dir) && same;
        continue;
      }
      write_file(dir + "/" + r.name + ".safetensors",
                 std::string(made.bytes.begin(), made.bytes.end()));
      entries += (entries.empty() ? "" : ",\n") + made.entry;
    }
    if (checking) return same ? 0 : 1;
    std::ostringstream catalogue;
    catalogue << "{\n"
              << "  \"generator\": \"scripts/data/make-trained-models.sh "
                 "(cpp/tools/make_trained_models.cpp)\",\n"
              << "  \"simd\": " << str(attn::simd::arch_name()) << ",\n"
              << "  \"probe\": \"model.headScores() default: the induction probe, "
              << attn::kProbeBatch << " sequences of min(context/2, " << attn::kProbeMaxHalfLength
              << ") random tokens then their repeat, seed " << attn::kProbeSeed
              << "; layers and heads count from 0\",\n"
              << "  \"models\": [\n"
              << entries << "\n  ]\n}\n";
    write_file(dir + "/models.json", catalogue.str());
  } catch (const std::exception& error) {
    std::fprintf(stderr, "make_trained_models: %s\n", error.what());
    return 1;
  }
  return 0;
}
