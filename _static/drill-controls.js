/* The drill page's controls: show or hide every answer at once, and show one topic at a time.
 * The answers are sphinx-togglebutton dropdowns (class toggle-hidden while folded); each topic
 * is a section headed by an h2. Pages without drill items are left alone.
 */
document.addEventListener("DOMContentLoaded", () => {
  if (!document.querySelector(".drill-item")) return;
  const title = document.querySelector("article h1");
  const topics = Array.from(document.querySelectorAll("article section > h2"))
    .map((h2) => h2.parentElement)
    .filter((section) => section.querySelector(".drill-item"));
  const bar = document.createElement("div");
  bar.className = "drill-controls";
  const button = (label, onClick) => {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = label;
    b.addEventListener("click", onClick);
    bar.appendChild(b);
  };
  const showAll = (show) =>
    document.querySelectorAll(".drill-item .admonition.dropdown").forEach((answer) => {
      answer.classList.toggle("toggle-hidden", !show);
      const toggle = answer.querySelector("button.toggle-button");
      if (toggle) toggle.classList.toggle("toggle-button-hidden", !show);
    });
  button("Show all answers", () => showAll(true));
  button("Hide all answers", () => showAll(false));
  const select = document.createElement("select");
  select.setAttribute("aria-label", "Topic");
  for (const name of ["All topics", ...topics.map((s) => s.querySelector("h2").textContent.replace("#", "").trim())]) {
    const option = document.createElement("option");
    option.textContent = name;
    select.appendChild(option);
  }
  select.addEventListener("change", () => {
    topics.forEach((section, i) => {
      section.hidden = select.selectedIndex !== 0 && select.selectedIndex !== i + 1;
    });
  });
  bar.appendChild(select);
  (title || document.querySelector("article")).after(bar);
});
