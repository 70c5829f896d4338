console.error('notes');
