/**
 * Whether this run includes the cluster fault suite: it does unless CLUSTER_FAULTS=0 (a machine without Go or root
 * for HAProxy, or a quicker local run). The test setup builds its binaries only when it runs.
 */
export const clusterSuiteRuns = (): boolean => process.env.CLUSTER_FAULTS !== '0';
