// Scoring and analysis: probabilities equal to transformers' (and to peft's and the merged
// model's with model.lora.path), binary and JSONL score files agree, `analyze` counts exactly the
// valid tokens of the score file, and cached confidences reproduce the online objective at the
// first step and are refused for another model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "cuset/analysis/score.h"
#include "cuset/model/lora.h"
#include "cuset/model/model.h"
#include "test_util.h"

namespace fs = std::filesystem;
using cuset::test::read_file;
using cuset::test::run_command;
using cuset::test::run_cuset;
using cuset::test::scratch_dir;
using cuset::test::write_file;
using nlohmann::json;

namespace {

std::string config(const std::string& dir) {
    using cuset::test::kDefault;
    return cuset::test::write_tiny_run_config(dir + "/c.yaml", dir,
                                              {{"data.eval", "\"\""},
                                               {"objective.chunk_size", "64"},
                                               {"train.micro_batch_size", "3"},
                                               {"train.grad_accum", "1"},
                                               {"train.max_steps", "1"},
                                               {"train.lr", kDefault},
                                               {"train.warmup_steps", kDefault},
                                               {"train.seed", "3"},
                                               {"checkpoint.every", kDefault},
                                               {"checkpoint.keep_last", kDefault},
                                               {"log.every", kDefault}});
}
// One element of an XML-ish document: its name, its attributes and the text right after its
// start tag (up to the next tag).
struct XmlElement {
    std::string name;
    std::map<std::string, std::string> attrs;
    std::string text;
};

// Parses `doc` into its elements in document order (`out`). Returns "" or what is wrong: an
// unterminated, unclosed or mismatched tag, a malformed attribute, or not exactly one root.
std::string parse_xml(const std::string& doc, std::vector<XmlElement>& out) {
    std::vector<std::string> open;
    int roots = 0;
    size_t pos = 0;
    if (doc.rfind("<?xml", 0) == 0) pos = doc.find("?>") + 2;
    while (true) {
        const size_t lt = doc.find('<', pos);
        if (lt == std::string::npos) break;
        const size_t gt = doc.find('>', lt);
        if (gt == std::string::npos) return "unterminated tag at byte " + std::to_string(lt);
        std::string tag = doc.substr(lt + 1, gt - lt - 1);
        const size_t next = doc.find('<', gt);
        const std::string text = doc.substr(gt + 1, (next == std::string::npos ? doc.size() : next) - gt - 1);
        pos = gt + 1;
        if (!tag.empty() && tag[0] == '/') {
            if (open.empty() || open.back() != tag.substr(1))
                return "closing </" + tag.substr(1) + "> does not match <" +
                       (open.empty() ? std::string("nothing") : open.back()) + ">";
            open.pop_back();
            continue;
        }
        const bool self_closing = !tag.empty() && tag.back() == '/';
        if (self_closing) tag.pop_back();
        XmlElement e;
        size_t i = 0;
        while (i < tag.size() && !std::isspace(static_cast<unsigned char>(tag[i]))) e.name += tag[i++];
        static const std::regex kAttr(R"re(\s*([A-Za-z_:][-A-Za-z0-9_:.]*)="([^"<]*)")re");
        std::string rest = tag.substr(i);
        std::smatch m;
        while (std::regex_search(rest, m, kAttr, std::regex_constants::match_continuous)) {
            e.attrs[m[1]] = m[2];
            rest = m.suffix();
        }
        if (rest.find_first_not_of(" \t\n") != std::string::npos) return "malformed attributes in <" + tag + ">";
        if (open.empty()) ++roots;
        if (!self_closing) open.push_back(e.name);
        e.text = text;
        out.push_back(std::move(e));
    }
    if (!open.empty()) return std::to_string(open.size()) + " unclosed element(s), innermost <" + open.back() + ">";
    if (roots != 1) return std::to_string(roots) + " root elements";
    return "";
}

std::vector<const XmlElement*> elements_named(const std::vector<XmlElement>& doc, const std::string& name) {
    std::vector<const XmlElement*> out;
    for (const XmlElement& e : doc)
        if (e.name == name) out.push_back(&e);
    return out;
}

// The numbers of an SVG path's d or a polyline's points, in order.
std::vector<double> numbers_in(const std::string& s) {
    std::vector<double> out;
    static const std::regex kNumber(R"(-?[0-9]+(\.[0-9]+)?)");
    for (auto it = std::sregex_iterator(s.begin(), s.end(), kNumber); it != std::sregex_iterator(); ++it)
        out.push_back(std::stod(it->str()));
    return out;
}

}  // namespace

TEST(Score, ProbabilitiesMatchTransformers) {
    std::string dir = scratch_dir("score-golden");
    auto r = run_cuset("score --config " + config(dir) + " --format jsonl --out " + dir + "/s.jsonl");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // fp32 logits through a 2-layer model computed by two implementations: probabilities agree
    // to a few fp32 ulps of the logits; 1e-5 absolute leaves room for the different summation order.
    auto c = run_command(std::string(CUSET_PYTHON) + " " + CUSET_SOURCE_DIR + "/tests/golden/check_scores.py " +
                         cuset::test::tiny_model_dir() + " " + dir + "/s.jsonl 1e-5");
    EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
    EXPECT_NE(c.out.find("token probabilities"), std::string::npos) << c.out;
}

TEST(Score, BinaryAndJsonlAgree) {
    std::string dir = scratch_dir("score-formats");
    std::string cfg = config(dir);
    ASSERT_EQ(run_cuset("score --config " + cfg + " --out " + dir + "/s.bin").exit_code, 0);
    ASSERT_EQ(run_cuset("score --config " + cfg + " --format jsonl --out " + dir + "/s.jsonl").exit_code, 0);
    cuset::ScoreHeader hb, hj;
    auto b = cuset::score_load_all(dir + "/s.bin", &hb);
    auto j = cuset::score_load_all(dir + "/s.jsonl", &hj);
    EXPECT_TRUE(hb.key == hj.key);
    ASSERT_EQ(b.size(), 10u);
    ASSERT_EQ(b.size(), j.size());
    for (size_t i = 0; i < b.size(); ++i) {
        EXPECT_EQ(b[i].id, j[i].id);
        EXPECT_EQ(b[i].ids, j[i].ids);
        EXPECT_EQ(b[i].trainable, j[i].trainable);
        EXPECT_EQ(b[i].tag_bits, j[i].tag_bits);
        ASSERT_EQ(b[i].prob.size(), j[i].prob.size());
        for (size_t t = 1; t < b[i].prob.size(); ++t) EXPECT_EQ(b[i].prob[t], j[i].prob[t]);
    }
    cuset::ScoreFile f(dir + "/s.bin");
    EXPECT_EQ(f.find("mini-warp"), 4);
    EXPECT_EQ(f.read(4).ids, b[4].ids);
}

// model.lora.path: score attaches the adapter (dropout 0) over the base. The reference is PyPI
// peft's PeftModel on the same base and folder, and the folder `export --merge` writes (W +
// scale * B @ A, fp32) scored as a plain model. The adapter's file says lora_dropout 0.3, so a
// score that kept dropout on would be random and miss both by far more than the tolerances.
TEST(Score, LoraPathScoresTheAdapterAsPeftAndTheMergedModel) {
    const std::string dir = scratch_dir("score-lora");
    const std::string cfg = config(dir);
    const std::string base = cuset::test::tiny_model_dir();
    const std::string adapter = dir + "/adapter";
    fs::create_directories(adapter);
    {
        cuset::Decoder m = cuset::model_load(base, at::kFloat, at::kCPU);
        cuset::LoraOptions o;
        o.r = 4;
        o.alpha = 8.0;
        o.dropout = 0.3;
        o.target_modules = {"q_proj", "v_proj", "o_proj", "up_proj", "down_proj"};
        at::Generator gen = at::detail::createCPUGenerator(/*seed_in=*/11);
        cuset::lora_attach(m, o, gen);
        at::NoGradGuard no_grad;
        for (auto& [name, a] : cuset::lora_adapters(m)) a->B.normal_(0.0, 0.3, gen);  // B = 0 is the base
        cuset::lora_save(m, o, adapter, base);
    }
    auto score = [&](const std::string& extra, const std::string& out) {
        auto r = run_cuset("score --config " + cfg + " --format jsonl --out " + dir + "/" + out + " " + extra);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return cuset::score_load_all(dir + "/" + out);
    };
    const auto plain = score("", "base.jsonl");
    const auto lora = score("--set model.lora.path=" + adapter, "lora.jsonl");
    auto e = run_cuset("export --merge --model " + adapter + " --out " + dir + "/merged --dtype float32");
    ASSERT_EQ(e.exit_code, 0) << e.err;
    const auto merged = score("--model " + dir + "/merged", "merged.jsonl");
    ASSERT_EQ(plain.size(), 10u);
    ASSERT_EQ(lora.size(), plain.size());
    ASSERT_EQ(merged.size(), plain.size());

    // Against peft: the same 1e-5 as the base model's parity (ProbabilitiesMatchTransformers),
    // fp32 logits of a 2-layer model by two implementations (measured: 2e-9).
    constexpr double kTol = 1e-5;
    auto c = run_command(std::string(CUSET_PYTHON) + " " + CUSET_SOURCE_DIR + "/tests/golden/check_scores.py " + base +
                         " " + dir + "/lora.jsonl " + std::to_string(kTol) + " " + adapter);
    EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
    std::printf("peft: %s", c.out.c_str());

    // Against the merged weights: the same function with x (W + s B A)^T in place of x W^T +
    // s (x A^T) B^T, i.e. fp32 reassociation, a few ulps of logits |x| < 10 (~1e-6); on
    // probabilities <= 1 that is below 1e-6 absolute, 1e-5 leaves room for the summation order
    // (measured: 2e-9). The adapter must matter: the base's probabilities (~1/400 each, an
    // untrained model) move by over 100x the tolerance (measured: 2.7e-3; 0 when score ignored
    // model.lora.path).
    double vs_merged = 0, vs_base = 0;
    for (size_t i = 0; i < plain.size(); ++i) {
        ASSERT_EQ(lora[i].ids, plain[i].ids);
        ASSERT_EQ(merged[i].ids, plain[i].ids);
        for (size_t t = 1; t < plain[i].prob.size(); ++t) {
            vs_merged = std::max(vs_merged, std::fabs(double(lora[i].prob[t]) - merged[i].prob[t]));
            vs_base = std::max(vs_base, std::fabs(double(lora[i].prob[t]) - plain[i].prob[t]));
        }
    }
    std::printf("max |p_lora - p_merged| %.3g, max |p_lora - p_base| %.3g\n", vs_merged, vs_base);
    CUSET_EXPECT_WITHIN(vs_merged, kTol);
    EXPECT_GE(vs_base, 100 * kTol);

    // The score file names the adapter and its model hash is not the base's (cached confidences
    // of base + adapter must not pass for the base's).
    cuset::ScoreHeader hb, hl;
    cuset::score_load_all(dir + "/base.jsonl", &hb);
    cuset::score_load_all(dir + "/lora.jsonl", &hl);
    EXPECT_NE(hb.key.model_hash, hl.key.model_hash);
    EXPECT_EQ(hb.key.pipeline_hash, hl.key.pipeline_hash);
    EXPECT_NE(hl.model.find(adapter), std::string::npos) << hl.model;

    // An adapter folder given as the model is refused with the fix.
    auto bad = run_cuset("score --config " + cfg + " --format jsonl --out " + dir + "/bad.jsonl --model " + adapter);
    EXPECT_EQ(bad.exit_code, 3);
    EXPECT_NE(bad.err.find("model.lora.path=" + adapter), std::string::npos) << bad.err;
}

TEST(Analyze, CountsTheValidTokensOfTheScoreFile) {
    std::string dir = scratch_dir("analyze");
    std::string cfg = config(dir);
    ASSERT_EQ(run_cuset("score --config " + cfg + " --out " + dir + "/s.bin").exit_code, 0);
    // The untrained tiny model gives every token p ~ 0.0025: fine bins and a threshold near the
    // median so that the histograms, CDFs and windows tell the two sets apart.
    auto r = run_cuset("analyze --config " + cfg + " --scores " + dir + "/s.bin --out " + dir +
                       "/an --set analysis.bins=1000 --set analysis.window=16 --set analysis.low_threshold=0.0025");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("KS test"), std::string::npos) << r.out;
    json a = json::parse(read_file(dir + "/an/analysis.json"));
    const int64_t window = a["options"]["window"], bins = a["options"]["bins"];
    const double low = a["options"]["low_threshold"], overlap = a["options"]["overlap"];
    ASSERT_EQ(window, 16);
    ASSERT_EQ(bins, 1000);

    // The same numbers counted here from the score file, naively: valid tokens are the training
    // targets with a probability (token 0 has none), windows are summed one by one.
    const std::vector<cuset::ScoreRecord> records = cuset::score_load_all(dir + "/s.bin");
    int64_t valid = 0, sensitive = 0, samples_with_tokens = 0, samples_with_low = 0;
    int64_t windows = 0, low_windows = 0, low_sensitive = 0;
    std::vector<int64_t> hist_sensitive(bins, 0), hist_non_sensitive(bins, 0);  // [bins]
    std::vector<double> values_sensitive, values_non_sensitive;                 // their confidences
    for (const cuset::ScoreRecord& rec : records) {
        std::vector<double> conf;  // [n] valid tokens' p(target)
        std::vector<int> sens;     // [n] 0 or 1
        for (size_t t = 1; t < rec.ids.size(); ++t) {
            if (!rec.trainable[t] || !std::isfinite(rec.prob[t])) continue;
            conf.push_back(rec.prob[t]);
            sens.push_back(rec.tag_bits[t] != 0);
            (sens.back() ? values_sensitive : values_non_sensitive).push_back(conf.back());
            const int64_t bin = std::min<int64_t>(bins - 1, static_cast<int64_t>(conf.back() * bins));
            ++(sens.back() ? hist_sensitive : hist_non_sensitive)[bin];
        }
        valid += static_cast<int64_t>(conf.size());
        sensitive += std::count(sens.begin(), sens.end(), 1);
        if (conf.empty()) continue;
        ++samples_with_tokens;
        const size_t len = std::min<size_t>(window, conf.size());
        bool any_low = false;
        for (size_t start = 0; start + len <= conf.size(); ++start) {
            ++windows;
            double sum = 0;
            int64_t n_sens = 0;
            for (size_t k = start; k < start + len; ++k) {
                sum += conf[k];
                n_sens += sens[k];
            }
            if (!(sum / static_cast<double>(len) < low)) continue;
            any_low = true;
            ++low_windows;
            low_sensitive += static_cast<double>(n_sens) > overlap * static_cast<double>(len);
        }
        samples_with_low += any_low;
    }
    ASSERT_GT(sensitive, 0);
    ASSERT_LT(sensitive, valid);
    ASSERT_GT(low_windows, 0);
    ASSERT_LT(low_windows, windows);

    EXPECT_EQ(a["n_samples"].get<int64_t>(), static_cast<int64_t>(records.size()));
    EXPECT_EQ(a["n_tokens"].get<int64_t>(), valid);
    EXPECT_EQ(a["confidence"]["all"]["count"].get<int64_t>(), valid);
    EXPECT_EQ(a["confidence"]["sensitive"]["count"].get<int64_t>(), sensitive);
    EXPECT_EQ(a["confidence"]["non_sensitive"]["count"].get<int64_t>(), valid - sensitive);
    ASSERT_TRUE(a["ks"].is_object()) << a.dump(2);
    EXPECT_EQ(a["ks"]["n_sensitive"].get<int64_t>(), sensitive);
    EXPECT_EQ(a["ks"]["n_non_sensitive"].get<int64_t>(), valid - sensitive);
    EXPECT_EQ(a["histogram"]["sensitive"]["counts"].get<std::vector<int64_t>>(), hist_sensitive);
    EXPECT_EQ(a["histogram"]["non_sensitive"]["counts"].get<std::vector<int64_t>>(), hist_non_sensitive);
    EXPECT_EQ(a["windows"]["n_samples"].get<int64_t>(), samples_with_tokens);
    EXPECT_EQ(a["windows"]["n_samples_with_low"].get<int64_t>(), samples_with_low);
    EXPECT_EQ(a["windows"]["n_windows"].get<int64_t>(), windows);
    EXPECT_EQ(a["windows"]["n_low_windows"].get<int64_t>(), low_windows);
    EXPECT_EQ(a["windows"]["n_low_sensitive"].get<int64_t>(), low_sensitive);

    // analysis.svg: one well-formed <svg>; each set's colour is the one its legend line shows.
    std::vector<XmlElement> svg;
    ASSERT_EQ(parse_xml(read_file(dir + "/an/analysis.svg"), svg), "");
    ASSERT_FALSE(svg.empty());
    EXPECT_EQ(svg[0].name, "svg");
    struct Set {
        const char* key;                 // in analysis.json
        std::string legend;              // its legend text
        std::vector<double>* values;     // its confidences, counted here
        std::string color;
    };
    std::vector<Set> sets = {
        {"sensitive", "sensitive (n = " + std::to_string(sensitive) + ")", &values_sensitive, ""},
        {"non_sensitive", "non-sensitive (n = " + std::to_string(valid - sensitive) + ")", &values_non_sensitive, ""}};
    for (Set& set : sets) {
        for (size_t i = 1; i < svg.size() && set.color.empty(); ++i)
            if (svg[i].name == "text" && svg[i].text == set.legend && svg[i - 1].name == "line")
                set.color = svg[i - 1].attrs["stroke"];
        ASSERT_FALSE(set.color.empty()) << "no legend line for '" << set.legend << "'";
        std::sort(set.values->begin(), set.values->end());
    }
    ASSERT_NE(sets[0].color, sets[1].color);
    auto set_of = [&](const XmlElement* e) -> const Set* {
        auto it = e->attrs.find("stroke");
        for (const Set& set : sets)
            if (it != e->attrs.end() && it->second == set.color) return &set;
        return nullptr;
    };

    // Histograms: one bar per bin in each set's colour, on the baseline when the bin is empty and
    // higher for a higher density (one log axis for both).
    std::vector<const XmlElement*> paths = elements_named(svg, "path");
    ASSERT_EQ(paths.size(), 2u);
    std::vector<std::pair<double, double>> density_y;  // (density, bar top y) of every bin
    double baseline = 0;
    for (const XmlElement* path : paths) {
        const Set* set = set_of(path);
        ASSERT_NE(set, nullptr) << "histogram in no set's colour";
        const std::vector<double> density = a["histogram"][set->key]["density"].get<std::vector<double>>();
        ASSERT_EQ(static_cast<int64_t>(density.size()), bins);
        // M x0 base, then per bin L left y L right y, then L x1 base Z.
        const std::vector<double> d = numbers_in(path->attrs.at("d"));
        ASSERT_EQ(static_cast<int64_t>(d.size()), 4 * bins + 4) << set->key;
        baseline = d[1];
        EXPECT_EQ(d[d.size() - 1], baseline);
        for (int64_t i = 0; i < bins; ++i) {
            const double left = d[2 + 4 * i], y = d[3 + 4 * i], right = d[4 + 4 * i], y2 = d[5 + 4 * i];
            EXPECT_LE(left, right) << set->key << " bin " << i;
            EXPECT_EQ(y, y2) << set->key << " bin " << i;
            if (density[i] == 0) {
                EXPECT_EQ(y, baseline) << set->key << " empty bin " << i;
            }
            density_y.emplace_back(density[i], y);
        }
    }
    std::sort(density_y.begin(), density_y.end());
    EXPECT_LT(density_y.back().second, baseline - 1) << "the densest bar has no height";
    for (size_t i = 1; i < density_y.size(); ++i) {
        if (density_y[i].first > density_y[i - 1].first) {
            EXPECT_LE(density_y[i].second, density_y[i - 1].second)
                << "density " << density_y[i].first << " drawn lower than " << density_y[i - 1].first;
        }
    }

    // CDF curves, one per set in its colour: read back through the frame of their panel (the
    // second of the two), each point is the share of that set's confidences <= x, up to the
    // 0.1 px the coordinates are written with.
    std::vector<const XmlElement*> frames;
    for (const XmlElement* rect : elements_named(svg, "rect"))
        if (rect->attrs.count("stroke") && rect->attrs.at("stroke") == "#333333") frames.push_back(rect);
    ASSERT_EQ(frames.size(), 2u);
    const double fx0 = std::stod(frames[1]->attrs.at("x")), fw = std::stod(frames[1]->attrs.at("width"));
    const double fy0 = std::stod(frames[1]->attrs.at("y")), fh = std::stod(frames[1]->attrs.at("height"));
    std::vector<const XmlElement*> curves = elements_named(svg, "polyline");
    ASSERT_EQ(curves.size(), 2u);
    EXPECT_NE(set_of(curves[0]), set_of(curves[1]));
    for (const XmlElement* c : curves) {
        const Set* set = set_of(c);
        ASSERT_NE(set, nullptr) << "CDF in no set's colour";
        const std::vector<double> pts = numbers_in(c->attrs.at("points"));
        ASSERT_GE(pts.size(), 4u);
        ASSERT_EQ(pts.size() % 2, 0u);
        const std::vector<double>& v = *set->values;
        auto share_le = [&](double x) {
            return static_cast<double>(std::upper_bound(v.begin(), v.end(), x) - v.begin()) / static_cast<double>(v.size());
        };
        int wrong = 0;
        for (size_t i = 0; i < pts.size(); i += 2) {
            const double x = (pts[i] - fx0) / fw, cdf = (fy0 + fh - pts[i + 1]) / fh;
            const double slack_x = 0.15 / fw, slack_y = 0.15 / fh;
            if (cdf < share_le(x - slack_x) - slack_y || cdf > share_le(x + slack_x) + slack_y) {
                if (++wrong <= 3)
                    ADD_FAILURE() << set->key << " CDF at x = " << x << " drawn as " << cdf << ", counted "
                                  << share_le(x);
            }
        }
        EXPECT_EQ(wrong, 0) << set->key << ": points off the counted CDF";
    }

    // The labels: the counts and the KS distance of the report.
    auto has_text = [&](const std::string& want) {
        for (const XmlElement* t : elements_named(svg, "text"))
            if (t->text.find(want) != std::string::npos) return true;
        return false;
    };
    char ks_text[64];
    std::snprintf(ks_text, sizeof ks_text, "D = %.4f", a["ks"]["statistic"].get<double>());
    EXPECT_TRUE(has_text(ks_text)) << ks_text;
    EXPECT_TRUE(has_text(std::to_string(valid) + " valid tokens"));
}

TEST(Score, CachedConfidencesReproduceOnlineFirstStepAndRefuseOtherModels) {
    std::string dir = scratch_dir("score-cached");
    std::string cfg = config(dir);
    ASSERT_EQ(run_cuset("score --config " + cfg + " --out " + dir + "/s.bin").exit_code, 0);
    auto online = run_cuset("--config " + cfg + " --run-name online");
    ASSERT_EQ(online.exit_code, 0) << online.err;
    auto cached = run_cuset("--config " + cfg + " --run-name cached --set objective.confidence.source=cached "
                            "--set objective.confidence.cache=" + dir + "/s.bin");
    ASSERT_EQ(cached.exit_code, 0) << cached.err;
    auto first_loss = [&](const std::string& run) {
        std::ifstream f(dir + "/" + run + "/metrics.jsonl");
        for (std::string line; std::getline(f, line);) {
            json j = json::parse(line);
            if (j.contains("loss")) return j["loss"].get<double>();
        }
        return std::nan("");
    };
    // Step 1 sees the initial model either way: same confidences up to the summation order of
    // two forward passes (fp32), hence the same mask and weights and the same loss (1e-5 relative).
    double a = first_loss("online"), b = first_loss("cached");
    CUSET_EXPECT_NEAR(a, b, 1e-5 * std::abs(a));
    // A score file of another model is refused with exit 3.
    std::string other = dir + "/other-model";
    fs::copy(cuset::test::tiny_model_dir(), other, fs::copy_options::recursive);
    write_file(other + "/config.json", read_file(other + "/config.json") + "\n");
    auto refused = run_cuset("--config " + cfg + " --run-name refused --set model.path=" + other +
                             " --set objective.confidence.source=cached --set objective.confidence.cache=" + dir + "/s.bin");
    EXPECT_EQ(refused.exit_code, 3);
    EXPECT_NE(refused.err.find("does not match this run: model"), std::string::npos) << refused.err;
}
