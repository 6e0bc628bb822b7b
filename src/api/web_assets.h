// The dashboard's files (src/api/web/), compiled into the binary by cmake/embed_file.cmake:
// nothing is read from disk or fetched from the network at run time.
#pragma once

#include <string_view>

namespace cohort::api::web {

std::string_view dashboard_html();
std::string_view dashboard_js();
std::string_view dashboard_css();

}  // namespace cohort::api::web
