// The search page: families whose syntax matches the query (docs/_ext/ptxspec_form_search.py)
// listed above Sphinx's own results, so that a full form such as
// mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 leads to the section that defines it.
(function () {
  "use strict";
  function families(query) {
    const form = query.trim().split(/\s+/)[0] || "";
    if (typeof PTX_FAMILIES === "undefined" || form.indexOf(".") < 0) return [];
    return PTX_FAMILIES.filter(([pattern]) => new RegExp(pattern, "i").test(form));
  }
  function show() {
    const query = new URLSearchParams(window.location.search).get("q") || "";
    const found = families(query);
    const results = document.getElementById("search-results");
    if (!found.length || !results) return;
    const root = document.documentElement.dataset.content_root || DOCUMENTATION_OPTIONS.URL_ROOT || "";
    const box = document.createElement("div");
    box.id = "ptx-form-results";
    const heading = document.createElement("h2");
    heading.textContent = "Instruction families of this form";
    box.appendChild(heading);
    const list = document.createElement("ul");
    for (const [, page, anchor, syntax, section] of found) {
      const item = document.createElement("li");
      const link = document.createElement("a");
      link.href = root + page + ".html#" + anchor;
      link.textContent = syntax;
      item.appendChild(link);
      item.appendChild(document.createTextNode(" (§" + section + ")"));
      list.appendChild(item);
    }
    box.appendChild(list);
    results.parentNode.insertBefore(box, results);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", show);
  else show();
})();
