/** Node i's MAC in the simulator: locally administered, 02:b0:07:xx:xx:xx. */
export const simMac = (i: number) =>
  `02:b0:07:${[(i >> 16) & 255, (i >> 8) & 255, i & 255].map((b) => b.toString(16).padStart(2, '0')).join(':')}`;
