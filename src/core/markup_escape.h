// Escaping text for HTML and XML (the SVG plots, Jinja's |escape filter).
#pragma once

#include <string>
#include <string_view>

namespace cohort {

// s with & < > ' " replaced by &amp; &lt; &gt; &#39; &#34; (what markupsafe.escape() gives,
// and valid in XML text and quoted attributes).
std::string markup_escape(std::string_view s);

}  // namespace cohort
