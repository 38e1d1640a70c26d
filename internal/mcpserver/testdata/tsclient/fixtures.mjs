// Arguments for every tool: one call that must succeed and one that must
// fail with an isError result. interop.mjs iterates tools/list; a tool
// without an entry here fails the test, so a new tool cannot be forgotten.
//
// Calls run in this table's order (later entries use earlier results);
// ctx holds what the Go test prepared (keys, ids), ok the
// structuredContent of the earlier successful calls.

const unknownUUID = "00000000-0000-4000-8000-00000000abcd";

export function fixtures(ctx, ok) {
  const spaceID = () => ok.create_space.space.id;
  return {
    agent_prime: {
      ok: () => ({}),
      error: () => ({ box_key: "abk_forged" }),
    },
    profile_get: {
      ok: () => ({}),
      error: () => ({ surplus: true }),
    },
    checkpoint_get: {
      ok: () => ({}),
      error: () => ({ box_key: ctx.bob_key }),
    },
    checkpoint_save: {
      ok: () => ({ idempotency_key: "ts-cp-1", expected_revision: "0", body_md: "from the TypeScript SDK" }),
      error: () => ({ idempotency_key: "ts-cp-2", expected_revision: "0", body_md: "stale" }),
      code: "REVISION_CONFLICT",
    },
    get_help: {
      ok: () => ({ tool: "checkpoint_save" }),
      error: () => ({ tool: "no_such_tool" }),
    },
    directory_search: {
      ok: () => ({}),
      error: () => ({ cursor: "not-a-cursor" }),
    },
    directory_get: {
      ok: () => ({ agent_id: ctx.bob_id }),
      error: () => ({ agent_id: unknownUUID }),
      code: "NOT_FOUND_OR_FORBIDDEN",
    },
    directory_update_self: {
      ok: () => ({ idempotency_key: "ts-dir-1", expected_revision: "0", role: "tester" }),
      error: () => ({ idempotency_key: "ts-dir-2", expected_revision: "0", role: "stale" }),
      code: "REVISION_CONFLICT",
    },
    rooms_list: {
      ok: () => ({}),
      error: () => ({ cursor: "not-a-cursor" }),
      code: "CURSOR_INVALID",
    },
    room_get: {
      ok: () => ({ room_id: ctx.room_id }),
      error: () => ({ room_id: unknownUUID }),
      code: "NOT_FOUND_OR_FORBIDDEN",
    },
    room_follow: {
      ok: () => ({ idempotency_key: "ts-follow-1", room_id: ctx.room_id, expected_revision: ok.room_get.membership.follow_revision, follow: "mentions" }),
      error: () => ({ idempotency_key: "ts-follow-2", room_id: ctx.room_id, expected_revision: ok.room_get.membership.follow_revision, follow: "all" }),
      code: "REVISION_CONFLICT",
    },
    room_brief_get: {
      ok: () => ({ room_id: ctx.room_id }),
      error: () => ({ room_id: unknownUUID }),
      code: "NOT_FOUND_OR_FORBIDDEN",
    },
    room_brief_update: {
      ok: () => ({ idempotency_key: "ts-brief-1", room_id: ctx.room_id, expected_revision: ok.room_brief_get.brief.revision, append_md: "A line from the SDK." }),
      error: () => ({ idempotency_key: "ts-brief-2", room_id: ctx.room_id, expected_revision: ok.room_brief_get.brief.revision, append_md: "stale" }),
      code: "REVISION_CONFLICT",
    },
    create_space: {
      ok: () => ({ data: { request_id: "ts-req-1", title: "Interop", goal: "Prove the SDK sees every error.", visibility: "private" } }),
      error: () => ({ data: { title: "no request id" } }),
      code: "INVALID_ARGUMENT",
    },
    get_space: {
      ok: () => ({ id: spaceID(), data: {} }),
      error: () => ({ id: unknownUUID, data: {} }),
      code: "NOT_FOUND_OR_FORBIDDEN",
    },
    list_spaces: {
      ok: () => ({ data: {} }),
      error: () => ({ data: { surplus: 1 } }),
      code: "INVALID_ARGUMENT",
    },
    update_space: {
      ok: () => ({ id: spaceID(), data: { expected_version: 1, title: "Interop", goal: "Still proving it.", status: "active" } }),
      error: () => ({ id: spaceID(), data: { expected_version: 1, title: "Interop", goal: "stale", status: "active" } }),
      code: "REVISION_CONFLICT",
    },
    add_space_member: {
      ok: () => ({ id: spaceID(), data: { agent_id: ctx.bob_id } }),
      error: () => ({ id: unknownUUID, data: { agent_id: ctx.bob_id } }),
      code: "NOT_FOUND_OR_FORBIDDEN",
    },
    remove_space_member: {
      ok: () => ({ id: spaceID(), data: { agent_id: ctx.bob_id } }),
      error: () => ({ id: unknownUUID, data: { agent_id: ctx.bob_id } }),
      code: "NOT_FOUND_OR_FORBIDDEN",
    },
    save_memory: {
      ok: () => ({ id: "ts-note", data: { expected_version: 0, content: "remember the SDK" } }),
      error: () => ({ id: "ts-note", data: { expected_version: 0, content: "stale" } }),
      code: "REVISION_CONFLICT",
    },
    get_memory: {
      ok: () => ({ id: "ts-note", data: {} }),
      error: () => ({ id: "missing-note", data: {} }),
      code: "NOT_FOUND_OR_FORBIDDEN",
    },
    list_memory: {
      ok: () => ({ data: {} }),
      error: () => ({ data: { surplus: 1 } }),
      code: "INVALID_ARGUMENT",
    },
    delete_memory: {
      ok: () => ({ id: "ts-note", data: { expected_version: 1 } }),
      error: () => ({ id: "ts-note", data: { expected_version: 1 } }),
      code: "NOT_FOUND_OR_FORBIDDEN",
    },
  };
}
