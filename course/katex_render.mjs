// Render TeX to HTML with KaTeX at build time: reads [{tex, display}] as JSON on
// stdin, writes [{html} | {error}] as JSON on stdout. Only \htmlData is trusted
// (it marks the clickable terms of a formula).
import katex from "../node_modules/katex/dist/katex.mjs";

let input = "";
for await (const chunk of process.stdin) input += chunk;
const out = JSON.parse(input).map(({ tex, display }) => {
  try {
    return {
      html: katex.renderToString(tex, {
        displayMode: display,
        throwOnError: true,
        strict: "ignore",
        trust: (ctx) => ctx.command === "\\htmlData",
      }),
    };
  } catch (e) {
    return { error: e.message };
  }
});
process.stdout.write(JSON.stringify(out));
