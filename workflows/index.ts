// The workflow bundle's entry point: every entity workflow type, by name.
export { serviceWorkflow } from './service.js';
export { configurationWorkflow } from './configuration.js';
export { revisionWorkflow } from './revision.js';
export { routeWorkflow } from './route.js';
export { ingressWorkflow } from './ingress.js';
export { domainMappingWorkflow } from './domainmapping.js';
export { gatewayCertificateWorkflow } from './gateway-certificate.js';
export { pokeSignal, stateQuery } from './entity.js';
