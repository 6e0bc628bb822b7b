// The dashboard routes over a fake cluster: the page at /dashboard and at / for browsers
// only, the JSON the page polls, and /metrics in Prometheus text format.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "api/api_routes.h"
#include "api/dashboard_routes.h"
#include "api/fake_engine.h"
#include "api/http_server.h"
#include "api/prometheus_metrics.h"
#include "api/web_assets.h"
#include "support/http_client.h"

namespace cohort::api_test {
namespace {

using cohort::testing::http_request;
using namespace cohort::api;  // NOLINT: the routes under test

runtime::ClusterView three_nodes() {
  runtime::ClusterView v;
  v.clustered = true;
  v.state = "placed";
  v.mode = "pipeline";
  v.transport = "tcp";
  v.placements = 2;
  v.n_layers = 6;
  const char* names[] = {"head", "w0", "w1"};
  for (int i = 0; i < 3; ++i) {
    runtime::NodeView n;
    n.name = names[i];
    n.role = i == 0 ? "head" : "worker";
    n.free_bytes = uint64_t{1} << 30;
    n.used_bytes = uint64_t{10} << 20;
    n.layer_begin = 2 * i;
    n.layer_end = 2 * i + 2;
    n.head_end = 8;
    v.nodes.push_back(n);
  }
  v.links = {{0, 1, 100, 1e9}, {0, 2, 120, 1e9}, {1, 2, 9000, 1e8}};  // w0-w1 is slow
  return v;
}

class DashboardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    events_.append("refused", "worker 127.0.0.1:9 refused the handshake: wrong key");
    Router router;
    add_api_routes(router, engine_, [](const HttpRequest&) { return dashboard_page(); });
    LiveSources live;
    live.model_name = "fake";
    live.model_summary = "6 layers";
    live.cluster = [] { return three_nodes(); };
    live.events = &events_;
    live.stats = [] {
      runtime::EngineStats s;
      s.requests_total = 7;
      s.generated_tokens = 123;
      s.queue_depth = 2;
      s.active_slots = 4;
      s.n_slots = 4;
      s.tokens_per_s = 41.5;
      return s;
    };
    live.requests = &requests_;
    add_dashboard_routes(router, std::move(live));
    router.set_observer(
        [this](const HttpRequest& q, const HttpResponse& r) { requests_.record(q, r); });
    ServerOptions options;
    options.port = 0;
    auto server = HttpServer::start(options, std::move(router));
    ASSERT_TRUE(server.is_ok()) << server.status().message();
    server_ = std::move(server).value();
  }
  void TearDown() override {
    if (server_) server_->stop();
  }
  cohort::testing::HttpReply get(const std::string& path,
                                 const cohort::testing::HeaderList& headers = {}) {
    return http_request(server_->port(), "GET", path, {}, headers);
  }

  FakeEngine engine_;
  runtime::EventLog events_;
  RequestMetrics requests_;
  std::unique_ptr<HttpServer> server_;
};

TEST_F(DashboardTest, RootIsOllamaForClientsAndTheDashboardForBrowsers) {
  EXPECT_EQ(get("/").body, "Ollama is running");
  EXPECT_EQ(get("/", {{"Accept", "*/*"}}).body, "Ollama is running");
  const auto page = get("/", {{"Accept", "text/html,application/xhtml+xml,*/*;q=0.8"}});
  EXPECT_EQ(page.status, 200);
  EXPECT_NE(page.header("content-type").find("text/html"), std::string::npos);
  EXPECT_EQ(page.body, std::string(web::dashboard_html()));
}

TEST_F(DashboardTest, PageAndAssetsAreServedFromTheBinary) {
  const auto page = get("/dashboard");
  EXPECT_EQ(page.status, 200);
  EXPECT_NE(page.body.find("<svg id=\"cluster\""), std::string::npos);
  EXPECT_NE(page.body.find("/dashboard/app.js"), std::string::npos);
  const auto js = get("/dashboard/app.js");
  EXPECT_EQ(js.status, 200);
  EXPECT_NE(js.header("content-type").find("javascript"), std::string::npos);
  EXPECT_NE(js.body.find("/v1/chat/completions"), std::string::npos);
  const auto css = get("/dashboard/style.css");
  EXPECT_EQ(css.status, 200);
  EXPECT_NE(css.header("content-type").find("text/css"), std::string::npos);
  // Nothing is fetched from elsewhere: no absolute URLs in the page or its script.
  for (const std::string& body : {page.body, js.body, css.body}) {
    EXPECT_EQ(body.find("https://"), std::string::npos);
  }
}

TEST_F(DashboardTest, ClusterJsonHasNodesLinksStatsAndWarnings) {
  const auto r = get("/v1/cluster");
  ASSERT_EQ(r.status, 200) << r.body;
  const auto j = nlohmann::json::parse(r.body, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.body;
  EXPECT_EQ(j["model"], "fake");
  ASSERT_EQ(j["cluster"]["nodes"].size(), 3u);
  EXPECT_EQ(j["cluster"]["nodes"][1]["name"], "w0");
  EXPECT_EQ(j["cluster"]["nodes"][2]["layers"], nlohmann::json::array({4, 6}));
  ASSERT_EQ(j["cluster"]["links"].size(), 3u);
  EXPECT_FALSE(j["cluster"]["links"][0]["slow"].get<bool>());
  EXPECT_TRUE(j["cluster"]["links"][2]["slow"].get<bool>());
  EXPECT_EQ(j["stats"]["queue_depth"], 2);
  EXPECT_DOUBLE_EQ(j["stats"]["tokens_per_s"].get<double>(), 41.5);
  ASSERT_EQ(j["warnings"].size(), 1u);
  EXPECT_EQ(j["warnings"][0]["kind"], "refused");
}

TEST_F(DashboardTest, MetricsArePrometheusText) {
  ASSERT_EQ(get("/").status, 200);
  ASSERT_EQ(get("/no/such/path").status, 404);
  const auto r = get("/metrics");
  ASSERT_EQ(r.status, 200);
  EXPECT_NE(r.header("content-type").find("version=0.0.4"), std::string::npos);
  for (const char* line : {
           "# TYPE cohort_requests_total counter",
           "cohort_requests_total{dialect=\"ollama\",route=\"/\",outcome=\"ok\"} 1\n",
           "cohort_requests_total{dialect=\"other\",route=\"other\",outcome=\"client_error\"} 1\n",
           "cohort_generated_tokens_total 123\n",
           "cohort_tokens_per_second 41.5\n",
           "cohort_queue_depth 2\n",
           "cohort_active_slots 4\n",
           "cohort_node_layers{node=\"w1\",role=\"worker\"} 2\n",
           "cohort_node_free_bytes{node=\"head\",role=\"head\"} 1073741824\n",
           "cohort_link_rtt_seconds{a=\"w0\",b=\"w1\"} 0.0089999999999999993\n",
           "cohort_cluster_placements 2\n",
       }) {
    EXPECT_NE(r.body.find(line), std::string::npos) << "missing: " << line << "\n" << r.body;
  }
}

TEST(PrometheusLabel, EscapesQuotesBackslashesAndNewlines) {
  EXPECT_EQ(prometheus_label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}

}  // namespace
}  // namespace cohort::api_test
