/** The dedicated Worker's entry point: exposes the workbench API over comlink, nothing else. */
import { expose } from 'comlink';
import { createWorkbench } from './api';

expose(createWorkbench(() => self.navigator.gpu));
