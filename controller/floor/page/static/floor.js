// tablectl floor web: the floor page keeps itself current. No inline script anywhere
// (Content-Security-Policy script-src 'self'). The server renders every fragment with
// autoescaping (controller/floor/page/templates); this script only swaps a section for the
// fresh one, polling at the interval the section names, one request at a time per section.
"use strict";

function follow(section) {
  const every = Number(section.dataset.every || "0") * 1000;
  if (!every) return;
  const url = "/floor/" + section.id;
  let busy = false;
  async function refresh() {
    if (busy) return;
    busy = true;
    try {
      const reply = await fetch(url, { credentials: "same-origin", cache: "no-store" });
      if (reply.status === 401) { window.location.assign("/login"); return; }
      if (reply.ok) {
        section.innerHTML = await reply.text();
        section.classList.remove("stale");
      } else {
        section.classList.add("stale");
      }
    } catch (error) {
      section.classList.add("stale");  // the floor process away: keep the last picture, marked
    } finally {
      busy = false;
    }
  }
  window.setInterval(refresh, every);
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("section[data-every]").forEach(follow);
});
