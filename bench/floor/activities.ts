export const floorActivities = { nothing: async () => 'ok' };
export type FloorActivities = typeof floorActivities;
