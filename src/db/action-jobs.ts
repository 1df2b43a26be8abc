/** Moved to src/engine/queue/open-jobs.ts (the job machinery's home); this forward goes once its last importer is switched. */
export { componentJobs, sessionJobCounts, type ComponentJob } from '../engine/queue/open-jobs.ts';
