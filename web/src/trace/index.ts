export { LiveTimeline } from './LiveTimeline';
export { TraceViewer } from './TraceViewer';
