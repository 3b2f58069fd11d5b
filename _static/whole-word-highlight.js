/* Search highlighting that matches whole words only.
 *
 * Sphinx highlights every search term as a substring, so a search for "CUDA out of memory"
 * marks the "out" inside "about". This script runs before Sphinx's highlighter (both are
 * deferred; this one loads later, but the highlighter waits for DOMContentLoaded): it takes
 * the terms away from it and marks whole-word matches of terms of three letters or more.
 */
(() => {
  const url = new URL(window.location);
  const query = localStorage.getItem("sphinx_highlight_terms") || url.searchParams.get("highlight") || "";
  localStorage.removeItem("sphinx_highlight_terms");
  if (url.searchParams.has("highlight")) {
    url.searchParams.delete("highlight");
    window.history.replaceState({}, "", url);
  }
  const terms = query.toLowerCase().split(/\s+/).filter((t) => t.length > 2);
  if (!terms.length) return;
  const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const source = `(?<![\\w])(${terms.map(escape).join("|")})(?![\\w])`;
  const pattern = new RegExp(source, "gi");
  const tester = new RegExp(source, "i");

  const mark = (root) => {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
      acceptNode: (node) =>
        node.parentElement.closest("script, style, textarea, button, select, .highlighted")
          ? NodeFilter.FILTER_REJECT
          : NodeFilter.FILTER_ACCEPT,
    });
    const hits = [];
    while (walker.nextNode()) if (tester.test(walker.currentNode.nodeValue)) hits.push(walker.currentNode);
    hits.forEach((node) => {
      const span = document.createElement("span");
      span.innerHTML = node.nodeValue
        .replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
        .replace(pattern, '<span class="highlighted">$1</span>');
      node.replaceWith(...span.childNodes);
    });
  };
  document.addEventListener("DOMContentLoaded", () => {
    const body = document.querySelector("div.body") || document.body;
    mark(body);
  });
})();
