// grid_lib: flat indices of a 1-D problem dispatched on a 2-D grid of workgroups. One dimension
// holds at most maxComputeWorkgroupsPerDimension (65535) workgroups, so the wrappers fold a larger
// count into (x, y); these helpers undo the fold.
//
// Formula, with wid = workgroup_id, nwg = num_workgroups, li = local_invocation_index:
//   group_index(wid, nwg)          = wid.y · nwg.x + wid.x             the workgroup's flat index
//   invocation_index(wid, nwg, li) = group_index(wid, nwg) · WG + li   the invocation's flat index
// Indices past the problem's end exist (the last row of the grid is partly empty): callers skip them.
// Reference: flatGrid in common/launch.ts, the host side of the fold.
// Needs from the including shader: `override WG: u32`, its (1-D) workgroup size.

fn group_index(wid: vec3u, nwg: vec3u) -> u32 {
  return wid.y * nwg.x + wid.x;
}

fn invocation_index(wid: vec3u, nwg: vec3u, li: u32) -> u32 {
  return (wid.y * nwg.x + wid.x) * WG + li;
}
