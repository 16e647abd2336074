export { LiveTimeline } from './LiveTimeline';
export { TraceViewer } from './TraceViewer';
export { chunkPlace } from './parts';
