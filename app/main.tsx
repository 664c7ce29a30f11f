import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import './styles.css';

const queryClient = new QueryClient();

// Ask the browser not to evict stored runs under storage pressure (it may say no; runs are still stored).
void navigator.storage?.persist?.().catch((e: Error) => console.warn(`storage.persist() failed: ${e.message}`));

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <App />
    </QueryClientProvider>
  </StrictMode>,
);
