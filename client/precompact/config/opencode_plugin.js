// precompact's plugin for OpenCode, written by `precompact install --agent opencode`.
//
// It hands each compaction to `precompact hook --agent opencode`, started by the command line
// below: precompact's Python by absolute path, isolated (-I: no PYTHONPATH or other PYTHON*
// variable of OpenCode's environment read, no folder of the project's on its path), running
// precompact's script by absolute path (never a command from the project or from PATH), and
// gives the model precompact's brief after a compaction. It never blocks OpenCode longer than the hook's budget for that event, ignores
// every failure (precompact logs its own in the project's logs/precompact-errors.log), and reads
// nothing from the project. `precompact uninstall --agent opencode` removes this file.
import { spawn } from "node:child_process";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";

const PRECOMPACT = "__PRECOMPACT__";
// Milliseconds each event may take before the hook is stopped and OpenCode goes on.
const BUDGET_MS = { PreCompact: 60000, PostCompact: 15000, SessionStart: 30000, UserPromptSubmit: 15000 };
// What the summary left out is computed by precompact's worker after the compaction: until it
// is there, the plugin asks again at most once every ASK_AGAIN_MS, at most MAX_ASKS times per
// compaction and OpenCode process, and never on a request otherwise (a hook asked with nothing
// pending answers after two stats, but it is still a process).
const ASK_AGAIN_MS = 5000;
const MAX_ASKS = 12;
const MAX_ANSWER_CHARS = 1 << 20;

// Where OpenCode keeps its sessions (what it reads itself: $XDG_DATA_HOME, else ~/.local/share).
function database() {
  const dataHome = process.env.XDG_DATA_HOME;
  const base = dataHome && isAbsolute(dataHome) ? dataHome : join(homedir(), ".local", "share");
  return join(base, "opencode", "opencode.db");
}

// Runs the hook for `event` with the event's fields on stdin; resolves to its stdout ("" on any
// failure or when the budget runs out).
function hook(event, fields, cwd) {
  return new Promise((resolve) => {
    let out = "";
    let done = false;
    let timer;
    const finish = (value) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(value);
    };
    let child;
    try {
      child = spawn(PRECOMPACT[0], [...PRECOMPACT.slice(1), "hook", "--agent", "opencode"], {
        cwd,
        stdio: ["pipe", "pipe", "ignore"],
      });
    } catch {
      finish("");
      return;
    }
    timer = setTimeout(() => {
      child.kill("SIGKILL");
      finish("");
    }, BUDGET_MS[event]);
    child.on("error", () => finish(""));
    child.stdout.on("data", (data) => {
      if (out.length < MAX_ANSWER_CHARS) out += data;
    });
    child.on("close", () => finish(out));
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify({ hook_event_name: event, cwd, transcript_path: database(), ...fields }));
  });
}

// What of PreCompact's answer the summariser may read: its plain words. An answer that is a JSON
// object is for the user (a `systemMessage`: a failure, a configuration not approved, which
// names `precompact trust`), never for the model.
function noteOf(answer) {
  const text = answer.trim();
  try {
    const value = JSON.parse(text);
    if (value !== null && typeof value === "object") return "";
  } catch {
    // plain words
  }
  return text;
}

// The text in the hook's answer to SessionStart or UserPromptSubmit ("" when there is none).
function briefOf(answer) {
  try {
    const context = JSON.parse(answer).hookSpecificOutput.additionalContext;
    return typeof context === "string" ? context : "";
  } catch {
    return "";
  }
}

export const Precompact = async ({ directory }) => {
  // The brief of each compaction (by its part's id): its first part, asked for once per OpenCode
  // process, and what the summary left out, asked for until it comes (within the bounds above).
  const briefs = new Map();
  // The sessions this process compacted: what their summary left out cannot be ready at the
  // first request after it (the worker computes it once the summary is known), so it is first
  // asked for ASK_AGAIN_MS after that request, however long the summary took.
  const compactedHere = new Set();

  // The brief of compaction `boundary` in session `sessionID`, both parts as known by now.
  const briefFor = async (boundary, sessionID) => {
    let known = briefs.get(boundary.id);
    if (!known) {
      const first = briefOf(await hook("SessionStart", { session_id: sessionID, source: "compact" }, directory));
      known = { first, second: "", asks: 0, askedAt: compactedHere.has(sessionID) ? Date.now() : 0 };
      briefs.set(boundary.id, known);
    }
    const now = Date.now();
    if (known.first && !known.second && known.asks < MAX_ASKS && now - known.askedAt >= ASK_AGAIN_MS) {
      known.asks += 1;
      known.askedAt = now;
      known.second = briefOf(await hook("UserPromptSubmit", { session_id: sessionID }, directory));
    }
    return known.second ? `${known.first}\n\n${known.second}` : known.first;
  };

  return {
    // Awaited by OpenCode before the summary request: the full history is saved first, and
    // the summariser is told where it is.
    "experimental.session.compacting": async (input, output) => {
      compactedHere.add(input.sessionID);
      const note = noteOf(await hook("PreCompact", { session_id: input.sessionID }, directory));
      if (note && Array.isArray(output.context)) output.context.push(note);
    },
    event: async ({ event }) => {
      if (event.type === "session.compacted" && event.properties && typeof event.properties.sessionID === "string") {
        await hook("PostCompact", { session_id: event.properties.sessionID }, directory);
      }
    },
    // After a compaction the history OpenCode sends starts with the compaction's message: the
    // brief goes there, on every request until the next compaction (OpenCode does not keep
    // text added here), in the same place each time, what the summary left out after the
    // first part in the same text part once it is known.
    "experimental.chat.messages.transform": async (_input, output) => {
      const messages = output && Array.isArray(output.messages) ? output.messages : [];
      const first = messages[0];
      const last = messages[messages.length - 1];
      const boundary = first && Array.isArray(first.parts) ? first.parts.find((p) => p.type === "compaction") : undefined;
      // The summary request itself ends with the new compaction: nothing to add there.
      if (!boundary || (last && Array.isArray(last.parts) && last.parts.some((p) => p.type === "compaction"))) return;
      const brief = await briefFor(boundary, first.info.sessionID);
      if (brief) {
        first.parts.push({
          id: `${boundary.id}-precompact`,
          sessionID: first.info.sessionID,
          messageID: first.info.id,
          type: "text",
          text: brief,
          synthetic: true,
        });
      }
    },
  };
};
